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
