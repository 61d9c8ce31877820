"""A page of another origin cannot write a label, even knowing the token (#25).

A second local server (another port: another origin) serves a page that posts a label to the
rating server, by ``fetch`` and by a plain HTML form, with the right token. Chromium sends
the requests for real; the rating server must refuse both (403) and write nothing, while the
rating page itself still labels (its own POSTs carry its own ``Origin``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from tests.browser.rating_app import BigSuite

ATTACK = """<!doctype html><html><body>
<form id="form" method="POST" action="{label}" enctype="text/plain">
<input name='{{"item": "x", "correct": true, "unsupported": [], "pad": "' value='"}}'>
</form>
<pre id="out">pending</pre>
<script>
fetch("{label}", {{method: "POST", headers: {{"Content-Type": "text/plain"}},
  body: JSON.stringify({{item: "{item}", correct: false, unsupported: []}})}})
  .then(r => r.status, e => "blocked: " + e)
  .then(s => {{ document.getElementById("out").textContent = "fetch " + s; }});
</script></body></html>"""


@pytest.fixture
def elsewhere() -> Iterator[dict[str, Any]]:
    """A server on another port whose one page is set by the test."""
    page: dict[str, Any] = {"html": b""}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def do_GET(self) -> None:  # noqa: N802
            body = page["html"]
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    page["url"] = f"http://127.0.0.1:{httpd.server_address[1]}/"
    try:
        yield page
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_page_of_another_origin_cannot_post_a_label(
    driver: Any, serve: Any, big_suite: BigSuite, elsewhere: dict[str, Any]
) -> None:
    server = serve("ada")
    # the rater's own page first: it labels one item, so its POSTs are accepted
    driver.get(server.url)
    WebDriverWait(driver, 15).until(
        lambda d: d.find_element(By.ID, "item").get_attribute("data-position") not in (None, "")
    )
    item = driver.execute_script(
        "return fetch('/api/start?token=' + new URL(location).searchParams.get('token'))"
        ".then(r => r.json()).then(j => j.item.item)"
    )
    token = urlsplit(server.url).query.split("token=")[1]
    origin = server.url.split("/?")[0]
    label = f"{origin}/api/label?token={token}"
    own = driver.execute_script(
        "return fetch(arguments[0], {method: 'POST', body: JSON.stringify("
        "{item: arguments[1], correct: true, unsupported: []})}).then(r => r.status)",
        label,
        item,
    )
    assert own == 200
    before = big_suite.labels()
    assert [x["correct"] for x in before] == [True]

    # then a page of another origin, holding the token, tries both ways
    elsewhere["html"] = ATTACK.format(label=label, item=item).encode()
    driver.get(elsewhere["url"])
    WebDriverWait(driver, 15).until(lambda d: d.find_element(By.ID, "out").text != "pending")
    # a "simple" request: sent, its reply hidden from the page by CORS; nothing was written
    assert driver.find_element(By.ID, "out").text == "fetch blocked: TypeError: Failed to fetch"
    assert big_suite.labels() == before  # the fetch said correct: false
    driver.find_element(By.ID, "form").submit()
    WebDriverWait(driver, 15).until(lambda d: "forbidden" in d.page_source)
    assert "sent from a page of another origin" in driver.page_source
    assert big_suite.labels() == before
