// reviewapp page behaviour. No inline scripts (CSP); htmx does the requests.
(function () {
  "use strict";
  // Show <time datetime> values in the viewer's time zone, with the offset, as the server
  // writes them (web/filters.zoned_time): "2026-05-01 14:00 UTC+02:00", "… 12:00 UTC" at none.
  function localiseTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (el) {
      if (el.dataset.localised) return;
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d)) return;
      var off = -d.getTimezoneOffset();
      var sign = off >= 0 ? "+" : "-";
      var hh = String(Math.floor(Math.abs(off) / 60)).padStart(2, "0");
      var mm = String(Math.abs(off) % 60).padStart(2, "0");
      var pad = function (n) { return String(n).padStart(2, "0"); };
      // data-precise (a tool call's times): with the seconds and milliseconds.
      var exact = el.hasAttribute("data-precise") ?
        ":" + pad(d.getSeconds()) + "." + String(d.getMilliseconds()).padStart(3, "0") : "";
      el.textContent = d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) +
        " " + pad(d.getHours()) + ":" + pad(d.getMinutes()) + exact + " UTC" + (off ? sign + hh + ":" + mm : "");
      el.dataset.localised = "1";
    });
  }
  document.addEventListener("DOMContentLoaded", function () { localiseTimes(document); });
  document.addEventListener("htmx:afterSwap", function (e) { localiseTimes(e.target); });
  // A request that never reached the server: say so instead of doing nothing.
  document.addEventListener("htmx:sendError", function () {
    var box = document.getElementById("messages");
    if (box) box.innerHTML = '<div class="flash flash-error" role="alert">The server could not be reached. Check your connection and try again.</div>';
  });
  // A refused write (stale form, conflict, server error) is answered with a message for the
  // page's message region (web/errors.py): show it at the control that was used too, where
  // the person is looking, and keep it there until that control succeeds (issue 17).
  function controlOf(elt) {
    return elt && elt.closest ? (elt.closest("[data-target]") || elt.closest("form")) : null;
  }
  document.addEventListener("htmx:afterRequest", function (e) {
    var xhr = e.detail.xhr, control = controlOf(e.detail.elt);
    if (!xhr || !control || !document.body.contains(control)) return;
    var old = control.querySelector(":scope > .control-error");
    if (xhr.status < 400) { if (old) old.remove(); return; }
    if (xhr.getResponseHeader("HX-Retarget") !== "#messages") return;
    // An inert document (nothing runs or loads); only its text is used.
    var parsed = new DOMParser().parseFromString(xhr.responseText, "text/html");
    var text = (parsed.body.textContent || "").replace(/\s+/g, " ").trim();
    if (!text) return;
    var box = old || document.createElement("p");
    box.className = "flash flash-error control-error";
    box.setAttribute("role", "alert");
    box.textContent = text;
    if (!old) control.appendChild(box);
  });
  // The export page after a refused export (exports/index.html): sending an export form
  // again either downloads, and a download loads no page that would take the error away,
  // or loads the page with its own error. Either way the old "Nothing was downloaded" is
  // stale, and so are the marks on the fields it described. Without JavaScript it stays
  // until the next page.
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (e.defaultPrevented || !form.classList || !form.classList.contains("export-form")) return;
    document.querySelectorAll("[data-export-error]").forEach(function (note) {
      document.querySelectorAll('[aria-describedby="' + note.id + '"]').forEach(function (field) {
        field.removeAttribute("aria-invalid");
        field.removeAttribute("aria-describedby");
      });
      note.remove();
    });
  });
})();

// A page opened at a fragment (a refused queue assignment comes back at its item's row,
// #item-<id>) gets no autofocus from the browser: the HTML spec skips autofocus when the URL
// targets an element. Focus the page's autofocus field then, where the fragment scrolled
// (on load: Chrome's scroll to the fragment, after DOMContentLoaded, takes the focus away).
// Without one, a fragment that names a form field (a saved fault category comes back at
// #fault_category) focuses that field: the browser scrolls to it but leaves the focus on body.
// The success message that action flashed sits in #messages at the page's top, out of view
// and, being there at load, never announced: the field's form says it in its own live region
// ([data-flash-here]) instead, where the person is (second new-user walk).
window.addEventListener("load", function () {
  if (!location.hash) return;
  var field = document.querySelector("[autofocus]");
  if (!field) {
    var target = null;
    try { target = document.getElementById(decodeURIComponent(location.hash.slice(1))); } catch (err) { target = null; }
    if (target && target.matches("input, select, textarea, button")) field = target;
  }
  if (field && document.activeElement === document.body) field.focus({ preventScroll: true });
  var here = field && field.form ? field.form.querySelector("[data-flash-here]") : null;
  var messages = document.getElementById("messages");
  if (!here || !messages) return;
  var saved = Array.prototype.slice.call(messages.querySelectorAll(".flash-success"));
  if (!saved.length) return;
  here.textContent = saved.map(function (f) { return f.textContent.trim(); }).join(" ");
  saved.forEach(function (f) { f.remove(); });
  if (!messages.children.length) messages.textContent = "";  // :empty hides the region
});

// Keyboard shortcuts on the run page (SPEC 8): j / k next / previous rateable part,
// + / - thumbs up / down on the focused part, n next run, ? the help dialog.
// They never fire while the reviewer types in a field or holds Ctrl / Alt / Meta.
(function () {
  "use strict";
  var focusedId = null;

  function targets() {
    return Array.prototype.slice.call(document.querySelectorAll("[data-target]"));
  }
  function isTyping(el) {
    if (!el || el === document.body) return false;
    var tag = el.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable;
  }
  function focusTarget(el) {
    targets().forEach(function (t) { t.classList.remove("is-focused"); });
    if (!el) return;
    focusedId = el.id;
    el.classList.add("is-focused");
    el.focus({ preventScroll: true });
    el.scrollIntoView({ block: "center", behavior: "auto" });
  }
  function current() {
    return focusedId ? document.getElementById(focusedId) : null;
  }
  function move(step) {
    var list = targets();
    if (!list.length) return;
    var i = list.indexOf(current());
    var next = i < 0 ? (step > 0 ? 0 : list.length - 1) : Math.min(list.length - 1, Math.max(0, i + step));
    focusTarget(list[next]);
  }
  function rate(value) {
    var el = current();
    if (!el) { move(1); el = current(); }
    if (!el) return;
    var button = el.querySelector('.thumb[data-rating="' + value + '"]');
    // The active thumb removes the rating when pressed; a shortcut only ever sets one.
    if (button && button.getAttribute("aria-pressed") !== "true") button.click();
  }
  function showHelp() {
    var dialog = document.getElementById("shortcuts");
    if (dialog && !dialog.open) dialog.showModal();
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
    if (isTyping(e.target)) return;
    var dialog = document.getElementById("shortcuts");
    if (dialog && dialog.open) return;
    switch (e.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "+": case "=": rate("positive"); break;
      case "-": case "_": rate("negative"); break;
      case "n": {
        var next = document.querySelector('[data-shortcut="next-run"]');
        if (next && next.href) window.location.assign(next.href);
        else if (next && next.form) next.form.requestSubmit(next);  // a queue's "Next item" (POST)
        else return;
        break;
      }
      case "?": showHelp(); break;
      default: return;
    }
    e.preventDefault();
  });
  document.addEventListener("click", function (e) {
    var opener = e.target.closest && e.target.closest("[data-shortcuts-open]");
    if (opener) showHelp();
    var target = e.target.closest && e.target.closest("[data-target]");
    if (target) {
      targets().forEach(function (t) { t.classList.remove("is-focused"); });
      focusedId = target.id;
      target.classList.add("is-focused");
    }
  });
  // A thumbs fragment swapped in by htmx replaces the focused element: keep the focus.
  // htmx:load fires on the new element itself once it is in the page (an outerHTML
  // swap's afterSwap fires on the old, detached element and may never reach document).
  function keepFocus() {
    var el = current();
    if (el && !el.classList.contains("is-focused")) {
      el.classList.add("is-focused");
      if (!isTyping(document.activeElement)) el.focus({ preventScroll: true });
    }
  }
  document.addEventListener("htmx:load", keepFocus);
  document.addEventListener("htmx:afterSwap", keepFocus);
})();

// The not-useful queue's bulk form (issue 17): "select all" on the page, and a preview of
// what "Move" will do with the selection: which items move and which it will skip.
(function () {
  "use strict";
  var LABELS = { new: "new", triaged: "triaged", resolved: "resolved", wont_fix: "won't fix" };
  function boxes() { return Array.prototype.slice.call(document.querySelectorAll('input[name="items"][form="bulk-form"]')); }
  function preview() {
    var out = document.getElementById("bulk-preview"), select = document.getElementById("bulk-state");
    var all = document.getElementById("select-all");
    if (all) {
      var list = boxes();
      if (all.parentNode) all.parentNode.hidden = list.length === 0;
      all.checked = list.length > 0 && list.every(function (b) { return b.checked; });
    }
    if (!out || !select) return;
    var target = select.value, moving = 0, skipped = [], refused = [];
    boxes().forEach(function (b) {
      if (!b.checked) return;
      if (b.dataset.state === target) skipped.push("#" + b.dataset.item);
      else if ((b.dataset.moves || "").split(" ").indexOf(target) >= 0) moving += 1;
      else refused.push("#" + b.dataset.item + " (" + (LABELS[b.dataset.state] || b.dataset.state) + ")");
    });
    if (!moving && !skipped.length && !refused.length) { out.textContent = ""; return; }
    var text = "Move to " + (LABELS[target] || target) + ": " + moving + " item" + (moving === 1 ? "" : "s");
    if (skipped.length) text += "; skips " + skipped.join(", ") + " (already " + (LABELS[target] || target) + ")";
    if (refused.length) text += "; cannot move " + refused.join(", ");
    out.textContent = text + ".";
  }
  document.addEventListener("change", function (e) {
    var t = e.target;
    if (t.id === "select-all") {
      boxes().forEach(function (b) { b.checked = t.checked; });
    }
    if (t.id === "select-all" || t.id === "bulk-state" || (t.name === "items" && t.getAttribute("form") === "bulk-form")) preview();
  });
  document.addEventListener("DOMContentLoaded", preview);
  document.addEventListener("htmx:afterSettle", preview);
})();

// The list filters (runs, triage): after a refused filter the fields are marked; say so
// with the next request, so its answer brings fresh (unmarked) filters back (web/runs.py,
// issue 17). A submitted form (the button, or Enter in a box) says X-Filter-Focus: its
// refusal focuses the first refused field (autofocus in the answer, which htmx honours).
// The runs list also asks as one types in the search, picks an option or leaves a changed
// box (Tab): those refusals leave the focus where the person is. Enter in a box fires its
// change, with the focus still in it, before the submit (which the search de-duplication
// below then drops): that change counts as the submit.
function filterSubmitted(trigger) {
  if (!trigger) return false;
  if (trigger.type === "submit") return true;
  var box = trigger.target;
  return trigger.type === "change" && box === document.activeElement && box.tagName === "INPUT" &&
    box.type !== "checkbox" && box.type !== "radio";
}
document.addEventListener("htmx:configRequest", function (e) {
  var grid = document.getElementById("filter-grid");
  if (!grid || !e.detail.elt || !e.detail.elt.contains || !e.detail.elt.contains(grid)) return;
  if (grid.querySelector(".has-error")) e.detail.headers["X-Filter-Errors"] = "1";
  if (filterSubmitted(e.detail.triggeringEvent)) e.detail.headers["X-Filter-Focus"] = "1";
});

// A page that shows a one-time secret is the answer to a POST: its history entry becomes
// a GET of the plain page, so a reload or Back shows no secret and re-posts nothing (no
// second token or account). Without JavaScript the browser asks before re-posting.
(function () {
  var shown = document.querySelector("[data-replace-history]");
  if (shown && window.history && history.replaceState) {
    history.replaceState(null, "", shown.getAttribute("data-replace-history"));
  }
})();

// One-time secrets (admin pages, issue 15): "Copy" puts the shown password or token
// secret on the clipboard; without JavaScript the field is selectable as it is.
document.addEventListener("click", function (e) {
  var button = e.target.closest && e.target.closest("[data-copy-target]");
  if (!button) return;
  var field = document.getElementById(button.getAttribute("data-copy-target"));
  if (!field) return;
  field.select();
  var done = function () { button.textContent = "Copied"; };
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(field.value).then(done, function () { document.execCommand("copy"); done(); });
  } else {
    document.execCommand("copy");
    done();
  }
});

// The run page's tool-call timeline (issue 18). "Show the next N of M tool calls" loads
// the next rows in place of itself: while loading it says so (htmx-indicator), then the
// first new row's summary takes the focus (a keyboard user goes on where the list grew);
// a failed load says so at the control and keeps it for another try. A live run's poll
// names the last row shown, so the rows loaded below survive its refresh.
(function () {
  "use strict";
  var focusNext = null;
  function moreOf(elt) { return elt && elt.closest ? elt.closest("[data-more-calls]") : null; }
  document.addEventListener("htmx:beforeRequest", function (e) {
    var more = moreOf(e.detail.elt);
    if (!more) return;
    var error = more.querySelector(".tl-more-error");
    if (error) error.textContent = "";
    var link = more.querySelector("[data-first]");
    focusNext = link ? link.getAttribute("data-first") : null;
  });
  function failed(e, text) {
    var more = moreOf(e.detail.elt);
    if (!more) return;
    focusNext = null;
    var error = more.querySelector(".tl-more-error");
    if (error) error.textContent = text;
  }
  // An error answer (the page's htmx config swaps those) leaves the rows and the control.
  document.addEventListener("htmx:beforeSwap", function (e) {
    var status = e.detail.xhr ? e.detail.xhr.status : 0;
    if (status < 400 || !moreOf(e.detail.elt)) return;
    e.detail.shouldSwap = false;
    failed(e, "The next tool calls could not be loaded (error " + status + "). Try again, or reload the page.");
  });
  document.addEventListener("htmx:sendError", function (e) {
    failed(e, "The server could not be reached. Check your connection and try again.");
  });
  document.addEventListener("htmx:load", function (e) {
    var row = e.target;
    if (!focusNext || !row || row.id !== focusNext) return;
    focusNext = null;
    var summary = row.querySelector("summary");
    if (summary) summary.focus();
  });
  document.addEventListener("htmx:configRequest", function (e) {
    var elt = e.detail.elt;
    if (!elt || !elt.classList || !elt.classList.contains("timeline")) return;
    var rows = elt.querySelectorAll(".tl-row[data-call]");
    if (rows.length) e.detail.parameters.call = rows[rows.length - 1].getAttribute("data-call");
  });
  // The poll replaces the whole timeline (new rows appended, statuses updated): the calls
  // the reader opened stay open, showing what they showed until their details reload
  // (the toggle), and the focus stays on the same row's control (new-user finding).
  var kept = null;
  document.addEventListener("htmx:beforeSwap", function (e) {
    var elt = e.detail.elt;
    if (!elt || !elt.classList || !elt.classList.contains("timeline") || !e.detail.shouldSwap) return;
    var open = {}, active = document.activeElement, focus = null;
    elt.querySelectorAll(".tl-row > details[open]").forEach(function (d) {
      var body = d.querySelector(".tl-body");
      open[d.parentNode.id] = body ? body.innerHTML : null;
    });
    if (active && elt.contains(active)) {
      var row = active.closest(".tl-row");
      if (active.id) focus = { id: active.id };
      else if (row && active.tagName === "SUMMARY") focus = { row: row.id };
    }
    kept = { id: elt.id, open: open, focus: focus };
  });
  document.addEventListener("htmx:load", function (e) {
    var elt = e.target;
    if (!kept || !elt || elt.id !== kept.id) return;
    var state = kept;
    kept = null;
    Object.keys(state.open).forEach(function (rowId) {
      var row = document.getElementById(rowId), d = row && row.querySelector(":scope > details");
      if (!d) return;
      var body = d.querySelector(".tl-body");
      if (body && state.open[rowId] !== null) body.innerHTML = state.open[rowId];
      d.open = true;
    });
    var target = null;
    if (state.focus && state.focus.id) target = document.getElementById(state.focus.id);
    else if (state.focus) {
      var row = document.getElementById(state.focus.row);
      target = row && row.querySelector(":scope > details > summary");
    }
    if (target) target.focus({ preventScroll: true });
  });
})();

// The runs list's search (new-user finding): one search is one history entry. The form
// asks as the person types (after 500 ms), then again on Enter (change and submit): an
// answer for the address already shown replaces its entry instead of adding one, and so
// does the next typed answer while the person goes on typing the same search (until
// Enter, another filter, Back or Forward); any other search adds an entry as before.
(function () {
  "use strict";
  var typed = null;  // the address the last search-as-you-type answer pushed
  document.addEventListener("htmx:beforeHistoryUpdate", function (e) {
    var h = e.detail.history, config = e.detail.requestConfig;
    if (!h || h.type !== "push" || !config || !config.elt || !config.elt.matches("form[role=search]")) return;
    var here = location.pathname + location.search;
    var event = config.triggeringEvent, byTyping = !!event && event.type === "input";
    if (h.path === here || (byTyping && typed === here)) h.type = "replace";
    typed = byTyping ? h.path : null;  // Enter or another filter ends the typed search
  });
  window.addEventListener("popstate", function () { typed = null; });
  // Enter after the typing's answer sends nothing (one search, one request): it still
  // ends the typed search, so the next one typed adds its own entry.
  document.addEventListener("htmx:confirm", function (e) {
    var event = e.detail.triggeringEvent, elt = e.detail.elt;
    if (elt && elt.matches && elt.matches("form[role=search]") && event && event.type !== "input") typed = null;
  });
})();

// The runs list's search, counted in requests (user-walk findings): one search is one
// request. The form is asked by the typing (after 500 ms), then by Enter's change and its
// submit: a trigger whose filters are the ones just asked for (in flight or answered)
// sends nothing; a newer search aborts an older one in flight (hx-sync="this:replace" on
// the form). A request the form or another control sent (a page link) ends that memory,
// and so does a failed answer, so asking again then works.
(function () {
  "use strict";
  var last = null;  // {form, query}: the search form's last request
  function isSearch(elt) { return !!elt && !!elt.matches && elt.matches("form[role=search]"); }
  function queryOf(form) { return new URLSearchParams(new FormData(form)).toString(); }
  document.addEventListener("htmx:confirm", function (e) {
    var form = e.detail.elt;
    if (!isSearch(form) || (e.detail.verb || "get") !== "get") return;
    var query = queryOf(form);
    if (last && last.form === form && last.query === query) { e.preventDefault(); return; }
    last = { form: form, query: query };
  });
  document.addEventListener("htmx:beforeRequest", function (e) {
    if (!isSearch(e.detail.elt)) last = null;
  });
  document.addEventListener("htmx:afterRequest", function (e) {
    var xhr = e.detail.xhr;  // aborted by a newer search: status 0, and last is the newer one
    if (isSearch(e.detail.elt) && xhr && xhr.status >= 400) last = null;
  });
  document.addEventListener("htmx:sendError", function (e) { if (isSearch(e.detail.elt)) last = null; });
})();

// Back / Forward abort the page's GET requests still in flight (user-walk finding): the
// page comes back from the server (historyCacheSize 0), and a search answered after Back
// swapped its rows in and pushed its address over it. Aborted before htmx swaps the
// restored page in (popstate; htmx's cache events, which come before its swap).
(function () {
  "use strict";
  var inFlight = new Set();
  document.addEventListener("htmx:beforeRequest", function (e) {
    var config = e.detail.requestConfig;
    if (config && config.verb === "get") inFlight.add(e.detail.elt);
  });
  document.addEventListener("htmx:afterRequest", function (e) { inFlight.delete(e.detail.elt); });
  function abortAll() {
    var elts = Array.from(inFlight);
    inFlight.clear();
    elts.forEach(function (elt) { if (document.body.contains(elt)) htmx.trigger(elt, "htmx:abort"); });
  }
  // Only where htmx restores a page (its own test): Back over a #fragment link keeps the page.
  window.addEventListener("popstate", function (e) { if (e.state && e.state.htmx) abortAll(); });
  document.addEventListener("htmx:historyCacheMiss", abortAll);
  document.addEventListener("htmx:historyCacheHit", abortAll);
})();

// The thumbs say when they are saving (new-user finding: nothing changed until the answer,
// so people clicked again): while a rating is sent the control is aria-busy and says
// "Saving…"; the answer (the control, re-rendered) says "✓ Saved". A failed save leaves
// the control as it was and says so in its status; the buttons stay usable.
(function () {
  "use strict";
  function thumbsOf(elt) { return elt && elt.closest ? elt.closest(".thumbs") : null; }
  function say(control, text) {
    var status = control.querySelector(".fb-status");
    if (status) status.textContent = text;
  }
  document.addEventListener("htmx:beforeRequest", function (e) {
    var control = thumbsOf(e.detail.elt);
    if (!control) return;
    control.setAttribute("aria-busy", "true");
    control.classList.remove("fb-failed");
    control.classList.add("fb-saving");
    say(control, "Saving…");
  });
  // An error answer that is not this control re-rendered (a 422 / 409 is) swaps nothing.
  document.addEventListener("htmx:beforeSwap", function (e) {
    var control = thumbsOf(e.detail.elt), xhr = e.detail.xhr;
    if (!control || !xhr || xhr.status < 400 || xhr.getResponseHeader("HX-Retarget")) return;
    if ((xhr.responseText || "").indexOf('id="' + control.id + '"') < 0) e.detail.shouldSwap = false;
  });
  document.addEventListener("htmx:afterRequest", function (e) {
    var control = thumbsOf(e.detail.elt), xhr = e.detail.xhr;
    if (!control || !document.body.contains(control)) return;  // swapped: the answer says
    control.removeAttribute("aria-busy");
    control.classList.remove("fb-saving");
    var status = xhr ? xhr.status : 0;
    if (status && status < 400) return;
    control.classList.add("fb-failed");
    say(control, status ? "Not saved (error " + status + "). Try again." :
      "Not saved: the server could not be reached. Try again.");
  });
})();
