// Times in the viewer's own zone: every <time data-local datetime="..."> shows its moment on the
// viewer's clock (with the date when it is not today) and keeps the UTC moment in its title.
// Without JavaScript the server's text stays, which says UTC. #timeline-zone names the zone.
(function () {
  "use strict";
  function two(n) { return (n < 10 ? "0" : "") + n; }

  function utc(when) {
    return when.getUTCFullYear() + "-" + two(when.getUTCMonth() + 1) + "-" + two(when.getUTCDate()) + " " +
      two(when.getUTCHours()) + ":" + two(when.getUTCMinutes()) + ":" + two(when.getUTCSeconds()) + " UTC";
  }

  function local(when) {
    var clock = two(when.getHours()) + ":" + two(when.getMinutes()) + ":" + two(when.getSeconds());
    if (when.toDateString() === new Date().toDateString()) return clock;
    return when.getFullYear() + "-" + two(when.getMonth() + 1) + "-" + two(when.getDate()) + " " + clock;
  }

  function localize(root) {
    if (!root.querySelectorAll) return;
    var found = Array.prototype.slice.call(root.querySelectorAll("time[data-local]"));
    if (root.matches && root.matches("time[data-local]")) found.push(root);
    found.forEach(function (el) {
      var when = new Date(el.getAttribute("datetime"));
      if (isNaN(when.getTime())) return;
      el.textContent = local(when);
      el.title = utc(when);
    });
    var zone = document.getElementById("timeline-zone");
    if (zone && !zone.hasAttribute("data-done")) {
      var name = Intl.DateTimeFormat().resolvedOptions().timeZone || "your time zone";
      zone.textContent = "Times in " + name + "; point at one for UTC.";
      zone.setAttribute("data-done", "");
    }
  }

  document.addEventListener("htmx:load", function (event) { localize(event.target); });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", function () { localize(document); });
  else localize(document);
})();
