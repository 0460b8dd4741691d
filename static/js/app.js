// reviewapp page behaviour. No inline scripts (CSP); htmx does the requests.
(function () {
  "use strict";
  // Show <time datetime> values in the viewer's time zone, with the offset.
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
      el.textContent = d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) +
        " " + pad(d.getHours()) + ":" + pad(d.getMinutes()) + " (UTC" + sign + hh + ":" + mm + ")";
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
})();

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
        if (next && next.href) window.location.assign(next.href); else return;
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
