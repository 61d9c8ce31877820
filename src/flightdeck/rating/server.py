"""The rating page's local web server: 127.0.0.1 only, a random free port, a random token.

Every request must carry the token (``?token=...``) and a ``Host`` of this server, or it is
refused with 403; so another site open in the same browser, or another user of the machine,
can neither read items nor write labels. A request that a page of another origin sent is
refused too, token or not (#25): an ``Origin`` that is not this server's address, a
``Sec-Fetch-Site`` other than ``same-origin`` or ``none``, and for a POST a ``Referer`` from
elsewhere. Browsers always send ``Origin`` with a POST; the page's referrer policy is
``same-origin`` (``no-referrer`` would make its own POSTs say ``Origin: null``), so its
address, token included, never reaches another site. The API is small:

- ``GET /?token=T``: the page (``page/index.html``, with ``app.js`` and ``style.css``)
- ``GET /api/start``: where to begin (the first unlabelled item) and the rater's progress
- ``GET /api/item?pos=N``: the item at position N of this rater's order
- ``GET /api/lines?pos=N&cite=C&page=P``: page P (from 0) of citation C of that item's
  cited lines, so a whole file or a long span is read page by page
- ``POST /api/label`` ``{"item", "correct", "unsupported": [citation numbers], "facts":
  [ticked, ...]}`` (``facts`` optional, one boolean per required fact): saves the
  label (durably, before answering) and returns the next unlabelled item, or ``null``, and
  under ``rated`` where a judge disagreed with the label just given (never before it is given)
- ``GET /api/review``: every item in the rater's order with their own verdict, for the
  review list shown once all are rated (any label can be revised from there)
- ``POST /api/finish``: the rater is done; the server stops

Once every item is labelled the page shows the review list; the server stops when the rater
presses Finish (or Ctrl-C in the terminal).
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from email.message import Message
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from flightdeck.errors import BadLabel, InputError, JSONProblem, NoSuchItem
from flightdeck.files.strict_json import loads_strict
from flightdeck.rating.session import RatingSession

HOST = "127.0.0.1"
_ASSETS = {
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}
_MAX_BODY = 64 * 1024


class RatingServer:
    """Serves one :class:`RatingSession`; ``serve()`` blocks until done or interrupted."""

    def __init__(self, session: RatingSession, *, port: int = 0, token: str | None = None):
        self.session = session
        self.token = token or secrets.token_urlsafe(24)
        self.finished = threading.Event()
        self._page = {
            name: resources.files("flightdeck.rating").joinpath("page", name).read_bytes()
            for name in ("index.html", "app.js", "style.css")
        }
        handler = type("_BoundHandler", (_Handler,), {"app": self})
        try:
            self._httpd = ThreadingHTTPServer((HOST, port), handler)
        except OSError as exc:
            raise InputError(
                "--port",
                None,
                f"cannot serve on {HOST}:{port} ({exc.strerror}); "
                "pick another port or leave --port out for a free one",
            ) from None
        self._httpd.daemon_threads = True
        self.port = int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/?token={self.token}"

    def serve(self) -> None:
        """Handle requests until every item is labelled (or KeyboardInterrupt)."""
        try:
            self._httpd.serve_forever(poll_interval=0.2)
        finally:
            self._httpd.server_close()

    def finish(self) -> None:
        """Stop :meth:`serve` from another thread (a request handler, a test)."""
        self.finished.set()
        threading.Thread(target=self._httpd.shutdown, daemon=True).start()

    def close(self) -> None:
        self._httpd.server_close()

    # --- what the handler calls --------------------------------------------------------

    def authorised(self, host: str | None, token: str | None) -> bool:
        hosts = {f"{HOST}:{self.port}", f"localhost:{self.port}"}
        return (
            host in hosts
            and token is not None
            and hmac.compare_digest(token.encode(), self.token.encode())
        )

    def same_origin(self, headers: Message, *, posting: bool) -> bool:
        """Whether no page of another origin sent the request (see the module doc)."""
        ours = {f"http://{HOST}:{self.port}", f"http://localhost:{self.port}"}
        origin, site = headers.get("Origin"), headers.get("Sec-Fetch-Site")
        if origin is not None and origin not in ours:
            return False
        if site is not None and site not in ("same-origin", "none"):
            return False
        referer = headers.get("Referer")
        if posting and origin is None and referer is not None:
            return any(referer == o or referer.startswith(o + "/") for o in ours)
        return True

    def page(self, name: str) -> bytes:
        data = self._page[name]
        if name == "index.html":
            title = _html_escape(self.session.suite_name)
            data = data.replace(b"{{SUITE}}", title.encode())
            data = data.replace(b"{{TOKEN}}", self.token.encode())
        return data

    def start(self) -> dict[str, Any]:
        first = self.session.first_unlabelled()
        return {
            "suite": self.session.suite_name,
            "rater": self.session.rater,
            "total": self.session.total,
            "labelled": self.session.labelled,
            "item": None if first is None else self.session.view(first).to_json(),
        }

    def item(self, position: int) -> dict[str, Any]:
        return self.session.view(position).to_json()

    def lines(self, position: int, number: int, page: int) -> dict[str, Any]:
        return self.session.citation_page(position, number, page).to_json()

    def review(self) -> dict[str, Any]:
        return {
            "items": self.session.review(),
            "labelled": self.session.labelled,
            "total": self.session.total,
        }

    def label(self, body: dict[str, Any]) -> dict[str, Any]:
        item_id, correct, unsupported = (
            body.get("item"),
            body.get("correct"),
            body.get("unsupported"),
        )
        if not isinstance(item_id, str) or not isinstance(correct, bool):
            raise BadLabel("item must be a string and correct true or false")
        if not isinstance(unsupported, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in unsupported
        ):
            raise BadLabel("unsupported must be a list of citation numbers")
        facts = body.get("facts")
        if facts is not None and (
            not isinstance(facts, list) or not all(isinstance(f, bool) for f in facts)
        ):
            raise BadLabel("facts must be a list of true or false, one per required fact")
        try:
            position = self.session.position_of(item_id)
        except NoSuchItem:
            raise BadLabel("unknown item; reload the page") from None
        result = self.session.save(position, correct, unsupported, facts)
        nxt = result.next_position
        rated = self.session.view(position)
        return {
            "saved": result.written,
            # Where a judge disagreed with the label just given: shown only now, after it.
            "rated": {
                "question_id": rated.question_id,
                "position": position,
                "judges": list(rated.judges),
            },
            "labelled": self.session.labelled,
            "total": self.session.total,
            "next": None if nxt is None else self.session.view(nxt).to_json(),
        }


def _html_escape(text: str) -> str:
    import html

    return html.escape(text, quote=True)


class _Handler(BaseHTTPRequestHandler):
    app: RatingServer
    server_version = "flightdeck-rating"
    sys_version = ""
    timeout = 30  # an idle connection (a browser's preconnect) does not hold a thread forever

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Quiet: the terminal shows the address and the progress, not an access log."""

    def _route(self) -> tuple[str, dict[str, list[str]]] | None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        token = query.get("token", [None])[0]
        if not self.app.authorised(self.headers.get("Host"), token):
            self._send(HTTPStatus.FORBIDDEN, b"forbidden: open the address the command printed\n")
            return None
        if not self.app.same_origin(self.headers, posting=self.command == "POST"):
            self._send(HTTPStatus.FORBIDDEN, b"forbidden: sent from a page of another origin\n")
            return None
        return parts.path, query

    def do_GET(self) -> None:  # noqa: N802
        routed = self._route()
        if routed is None:
            return
        path, query = routed
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, self.app.page("index.html"), "text/html; charset=utf-8")
        elif path in _ASSETS:
            name, kind = _ASSETS[path]
            self._send(HTTPStatus.OK, self.app.page(name), kind)
        elif path == "/api/start":
            self._json(self.app.start())
        elif path == "/api/review":
            self._json(self.app.review())
        elif path == "/api/item":
            numbers = _numbers(query, "pos")
            try:
                if numbers is None:
                    raise NoSuchItem("the position is not a number")
                reply = self.app.item(*numbers)
            except NoSuchItem:
                self._json({"error": "no item at that position"}, HTTPStatus.NOT_FOUND)
            else:
                self._json(reply)
        elif path == "/api/lines":
            numbers = _numbers(query, "pos", "cite", "page")
            try:
                if numbers is None:
                    raise NoSuchItem("a position, citation or page is not a number")
                reply = self.app.lines(*numbers)
            except NoSuchItem:
                self._json({"error": "no such citation"}, HTTPStatus.NOT_FOUND)
            else:
                self._json(reply)
        else:
            self._send(HTTPStatus.NOT_FOUND, b"not found\n")

    def do_POST(self) -> None:  # noqa: N802
        routed = self._route()
        if routed is None:
            return
        if routed[0] == "/api/finish":
            self._json({"finished": True, "labelled": self.app.session.labelled})
            self.app.finish()
            return
        if routed[0] != "/api/label":
            self._send(HTTPStatus.NOT_FOUND, b"not found\n")
            return
        try:
            length = _number(self.headers.get("Content-Length", "0"))
            if length is None or not 0 < length <= _MAX_BODY:
                raise BadLabel("the request body is missing or too large")
            body = loads_strict(self.rfile.read(length))
            if not isinstance(body, dict):
                raise BadLabel("the request body must be a JSON object")
            reply = self.app.label(body)
        except (BadLabel, JSONProblem) as exc:
            self._json({"error": str(exc)}, HTTPStatus.BAD_REQUEST)
            return
        self._json(reply)

    def _json(self, obj: Any, status: HTTPStatus = HTTPStatus.OK) -> None:
        data = json.dumps(obj, ensure_ascii=False).encode()
        self._send(status, data, "application/json; charset=utf-8")

    def _send(
        self, status: HTTPStatus, data: bytes, kind: str = "text/plain; charset=utf-8"
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Referrer-Policy", "same-origin")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
        )
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


def _number(text: str) -> int | None:
    """``text`` as an integer, or None when it is not one."""
    try:
        return int(text)
    except ValueError:
        return None


def _numbers(query: dict[str, list[str]], *names: str) -> tuple[int, ...] | None:
    """The query's integer parameters ``names``, or None when one is missing or not a number."""
    found = [_number(query.get(name, [""])[0]) for name in names]
    return None if None in found else tuple(n for n in found if n is not None)
