// The rating page: one answer at a time, keyboard first. Nothing here knows which arm
// wrote an answer: the server sends only the question, the key, the answer and the cited
// lines. Every label is saved by the server before the next item is shown.
"use strict";

(function () {
  const token = new URLSearchParams(window.location.search).get("token") || "";
  const $ = (id) => document.getElementById(id);

  let view = null; // the item on screen
  let ticks = []; // one boolean per required fact
  let flags = []; // one boolean per citation: true = does not support the claim
  let override = null; // null, or the verdict the rater set against the ticks
  let busy = false;
  let current = 0; // the citation [ and ] page through: the last one touched, from 1
  let wanted = {}; // citation number -> the page asked for (keys pressed faster than replies)
  let reviewing = false; // true once the rater has seen the review list: confirm returns there
  // Milliseconds from a confirming key press to the next item painted (read by the tests).
  window.flightdeckTimings = [];

  function api(path, options) {
    const sep = path.includes("?") ? "&" : "?";
    return fetch(path + sep + "token=" + encodeURIComponent(token), options).then((r) =>
      r.json().then((body) => {
        if (!r.ok) throw new Error(body.error || r.statusText);
        return body;
      }),
    );
  }

  function verdict() {
    if (override !== null) return override;
    return ticks.length > 0 && ticks.every(Boolean);
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (name === "class") node.className = value;
      else node.setAttribute(name, value);
    }
    for (const child of children) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function showError(message) {
    const box = $("error");
    box.textContent = message;
    box.hidden = !message;
  }

  function show(item) {
    view = item;
    const own = item.own;
    // The facts this rater ticked last time, when the label says; else all or none by verdict.
    ticks = item.facts.map((_, i) =>
      own && own.facts ? Boolean(own.facts[i]) : Boolean(own && own.correct),
    );
    flags = item.citations.map((c) => Boolean(own && own.unsupported.includes(c.number)));
    override = null;
    const computed = ticks.length > 0 && ticks.every(Boolean);
    if (own && own.correct !== computed) override = own.correct; // a verdict set against the ticks
    $("question-id").textContent = item.question_id;
    $("kind").textContent = item.kind;
    $("question").textContent = item.question;
    $("answer-key").textContent = item.answer_key;
    $("answer").textContent = item.answer || "(empty answer)";
    $("facts").replaceChildren(
      ...item.facts.map((fact, i) => {
        const box = el("input", { type: "checkbox", id: "fact-" + (i + 1), tabindex: "-1" });
        box.addEventListener("change", () => toggleFact(i));
        return el("li", {}, el("label", {}, box, el("kbd", {}, i + 1), fact));
      }),
    );
    $("citations").replaceChildren(...item.citations.map(citationNode));
    wanted = {};
    const paged = item.citations.find((c) => c.pages > 1);
    current = paged ? paged.number : 0;
    markCurrent();
    $("no-citations").hidden = item.citations.length > 0;
    $("own").textContent = own
      ? "You rated this answer" + (own.time ? " at " + own.time : "") + "; confirming again keeps or replaces that label."
      : "";
    $("judges").replaceChildren(...(item.judges || []).map(judgeNode));
    $("judges").hidden = !(item.judges || []).length;
    $("item").dataset.position = String(item.position);
    $("item").dataset.item = item.item;
    showError("");
    refresh();
    $("item").hidden = false;
    $("done").hidden = true;
    $("btn-back").disabled = item.position === 0;
    window.scrollTo(0, 0);
  }

  // A judge that disagreed with the rater's label: sent by the server only once the rater
  // has rated the answer, so it can never sway the label it is compared with.
  function judgeText(j) {
    const said = j.correct ? "correct" : "not correct";
    const missing = j.missing.length ? "; it did not find: " + j.missing.join("; ") : "";
    const found = j.found.length
      ? "; it found: " + j.found.map((f) => f.fact + " (\u201c" + f.quote + "\u201d)").join("; ")
      : "";
    return "Judge " + j.judge + " disagreed: it said " + said + missing + found + ".";
  }

  function judgeNode(j) {
    return el("li", { class: "judge" }, judgeText(j));
  }

  function showAfter(rated) {
    const box = $("after");
    const judges = (rated && rated.judges) || [];
    box.hidden = judges.length === 0;
    box.textContent = judges.length
      ? "On the answer you just rated (" + rated.question_id + "): " +
        judges.map(judgeText).join(" ") + " Backspace goes back to it."
      : "";
  }

  function citationNode(c) {
    const i = c.number - 1;
    const key = i < 9 ? String.fromCharCode(97 + i) : "";
    const box = el("input", { type: "checkbox", id: "flag-" + c.number, tabindex: "-1" });
    box.addEventListener("change", () => toggleFlag(i));
    const head = el(
      "div",
      { class: "citation-head" },
      el("strong", {}, "[" + c.number + "]"),
      el("span", { class: "uri" }, c.uri),
      el("label", {}, box, key ? el("kbd", {}, key) : "", " does not support the claim"),
    );
    const node = el("li", { class: "citation", id: "citation-" + c.number }, head);
    if (c.note) node.append(el("p", { class: "note" }, c.note));
    if (c.lines.length) node.append(linesNode(c));
    if (c.pages > 1) node.append(pagerNode(c));
    return node;
  }

  function linesNode(c) {
    return el(
      "pre",
      { class: "lines", id: "lines-" + c.number },
      ...c.lines.map(([n, text, cited]) =>
        el("span", cited ? { class: "cited" } : {}, el("i", {}, n), text),
      ),
    );
  }

  // A whole file or a long span: every line is reachable, a page at a time (#21).
  function pagerNode(c) {
    const earlier = el("button", { type: "button", class: "page-prev" }, "\u2190 Earlier lines ", el("kbd", {}, "["));
    const later = el("button", { type: "button", class: "page-next" }, "Later lines ", el("kbd", {}, "]"), " \u2192");
    const top = c.lines.length ? c.lines[0][0] : c.first;
    const bottom = c.lines.length ? c.lines[c.lines.length - 1][0] : c.first;
    const where = el(
      "span",
      { class: "page-where" },
      "lines " + top + "\u2013" + bottom + " of " + c.first + "\u2013" + c.last +
        " (page " + (c.page + 1) + " of " + c.pages + ")",
    );
    earlier.disabled = c.page === 0;
    later.disabled = c.page === c.pages - 1;
    earlier.addEventListener("click", () => turnPage(c.number, -1));
    later.addEventListener("click", () => turnPage(c.number, 1));
    return el("div", { class: "pager", id: "pager-" + c.number, "data-page": String(c.page) }, earlier, where, later);
  }

  function turnPage(number, step) {
    if (!view) return;
    const c = view.citations[number - 1];
    if (!c || c.pages <= 1) return;
    current = number;
    markCurrent();
    const from = number in wanted ? wanted[number] : c.page;
    const page = Math.min(Math.max(from + step, 0), c.pages - 1);
    if (page === from) return;
    wanted[number] = page;
    const at = view.position;
    api("/api/lines?pos=" + at + "&cite=" + number + "&page=" + page)
      .then((next) => {
        if (!view || view.position !== at) return; // the rater moved on meanwhile
        if (wanted[number] !== next.page) return; // a later key press asked for another page
        view.citations[number - 1] = next;
        const node = $("citation-" + number);
        const old = $("lines-" + number);
        if (old) old.replaceWith(linesNode(next));
        $("pager-" + number).replaceWith(pagerNode(next));
        node.classList.toggle("flagged", flags[number - 1]);
        markCurrent();
      })
      .catch((err) => showError(err.message));
  }

  function markCurrent() {
    if (!view) return;
    view.citations.forEach((c) =>
      $("citation-" + c.number).classList.toggle("current", c.number === current),
    );
  }

  function refresh() {
    ticks.forEach((on, i) => ($("fact-" + (i + 1)).checked = on));
    flags.forEach((on, i) => {
      $("flag-" + (i + 1)).checked = on;
      $("citation-" + (i + 1)).classList.toggle("flagged", on);
    });
    const correct = verdict();
    const line = $("verdict");
    const why =
      override !== null
        ? "set by you"
        : ticks.filter(Boolean).length + " of " + ticks.length + " facts ticked";
    line.textContent = (correct ? "Verdict: correct" : "Verdict: not correct") + " (" + why + ")";
    line.className = "verdict " + (correct ? "correct" : "incorrect");
    line.dataset.correct = String(correct);
    $("progress").textContent =
      "Answer " + (view.position + 1) + " of " + view.total + " · " + view.labelled + " rated";
  }

  function toggleFact(i) {
    if (i >= ticks.length) return;
    ticks[i] = !ticks[i];
    override = null;
    refresh();
  }

  function toggleFlag(i) {
    if (i >= flags.length) return;
    flags[i] = !flags[i];
    if (view.citations[i].pages > 1) current = i + 1; // [ and ] now page this one
    markCurrent();
    refresh();
  }

  function flipVerdict() {
    const computed = ticks.length > 0 && ticks.every(Boolean);
    const next = !verdict();
    override = next === computed ? null : next;
    refresh();
  }

  // The review list: every answer in this rater's order with their own verdict (nothing
  // that names the arm); picking one opens it, and confirming returns here.
  function showReview() {
    return api("/api/review").then((review) => {
      view = null;
      reviewing = true;
      $("item").hidden = true;
      $("done").hidden = false;
      $("review-title").textContent =
        review.labelled === review.total
          ? "All answers rated"
          : review.labelled + " of " + review.total + " answers rated";
      $("progress").textContent = review.labelled + " of " + review.total + " rated";
      $("review").replaceChildren(
        ...review.items.map((r) => {
          const mark = r.correct === null ? "not rated" : r.correct ? "correct" : "not correct";
          const button = el(
            "button",
            { type: "button", class: "review-item", "data-position": String(r.position) },
            el("span", { class: "review-id" }, r.question_id),
            " " + r.question + " ",
            el("span", { class: "review-mark " + (r.correct ? "correct" : "incorrect") }, mark),
          );
          button.addEventListener("click", () => openAt(r.position));
          return el("li", {}, button);
        }),
      );
      window.scrollTo(0, 0);
    });
  }

  function openAt(position) {
    if (busy) return;
    busy = true;
    api("/api/item?pos=" + position)
      .then((item) => {
        showAfter(null);
        show(item);
      })
      .catch((err) => showError(err.message))
      .finally(() => (busy = false));
  }

  function finish() {
    api("/api/finish", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" })
      .then(() => {
        view = null;
        $("item").hidden = true;
        $("done").hidden = true;
        $("finished").hidden = false;
      })
      .catch((err) => showError(err.message));
  }

  function finished() {
    return showReview();
  }

  function confirmLabel() {
    if (!view || busy) return;
    busy = true;
    const started = performance.now();
    const body = {
      item: view.item,
      correct: verdict(),
      unsupported: flags.flatMap((on, i) => (on ? [i + 1] : [])),
      facts: ticks.slice(), // stored in the label: fact-level agreement needs them
    };
    api("/api/label", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    })
      .then((reply) => {
        const after = reviewing || !reply.next ? showReview() : Promise.resolve(show(reply.next));
        return after.then(() => showAfter(reply.rated));
      })
      .then(() => {
        // After the next frame is painted: the time the rater waits for the next item.
        requestAnimationFrame(() =>
          setTimeout(() => window.flightdeckTimings.push(performance.now() - started), 0),
        );
      })
      .catch((err) => showError("Not saved: " + err.message + ". Press Enter to try again."))
      .finally(() => (busy = false));
  }

  function goBack() {
    if (!view || busy || view.position === 0) return;
    openAt(view.position - 1);
  }

  // Buttons for every action, so mouse and touch work as well as the keyboard.
  $("btn-back").addEventListener("click", goBack);
  $("btn-verdict").addEventListener("click", () => view && flipVerdict());
  $("btn-confirm").addEventListener("click", confirmLabel);
  $("btn-review").addEventListener("click", () => !busy && showReview());
  $("btn-finish").addEventListener("click", finish);

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || !view) return;
    const code = event.code || "";
    let handled = true;
    if (event.shiftKey && /^Digit[1-9]$/.test(code)) toggleFlag(Number(code.slice(5)) - 1);
    else if (!event.shiftKey && /^[1-9]$/.test(event.key)) toggleFact(Number(event.key) - 1);
    else if (/^[a-i]$/.test(event.key)) toggleFlag(event.key.charCodeAt(0) - 97);
    else if (event.key === "v") flipVerdict();
    else if (event.key === "]") turnPage(current, 1);
    else if (event.key === "[") turnPage(current, -1);
    else if (event.key === "Enter") confirmLabel();
    else if (event.key === "Backspace" || event.key === "ArrowLeft") goBack();
    else handled = false;
    if (handled) event.preventDefault();
  });

  api("/api/start")
    .then((start) => {
      if (start.item) show(start.item);
      else finished();
    })
    .catch((err) => {
      $("item").hidden = false;
      showError("Could not load: " + err.message);
    });
})();
