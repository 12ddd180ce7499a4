// Times in the viewer's own zone. The browser tells the server its zone and how it writes dates
// (the wfapp_tz and wfapp_dates cookies, from Intl): pages and live updates are rendered in that
// zone from then on (wfapp.web.viewer_zone), with the UTC moment in each <time>'s title.
// Every <time data-local datetime="..."> shows its moment on the viewer's clock here too (with
// the date when it is not today), so a page rendered before the cookie was set is right as well.
// Date fields marked data-date-example show an example date the way the viewer writes one, and
// every [data-number] is written the viewer's way (2,300.50 or 2.300,50), its decimals kept.
// #timeline-zone names the zone.
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

  var zoneName = (Intl.DateTimeFormat().resolvedOptions().timeZone || "");

  // "dmy", "mdy" or "ymd": the order of a date's parts as this browser writes one.
  function dateOrder() {
    var parts = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "2-digit", day: "2-digit" })
      .formatToParts(new Date(2026, 0, 31));
    return parts.filter(function (p) { return p.type === "day" || p.type === "month" || p.type === "year"; })
      .map(function (p) { return p.type.charAt(0); }).join("");
  }

  function example(withTime) {
    var shown = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "2-digit", day: "2-digit" })
      .format(new Date(2026, 0, 31));
    return withTime ? shown + " 18:00" : shown;
  }

  // Zone names (letters, digits, / _ + -) are cookie-safe as they are: sent unencoded.
  function remember(name, value) {
    if (!/^[A-Za-z0-9\/_+-]+$/.test(value || "")) return;
    if (document.cookie.split("; ").indexOf(name + "=" + value) >= 0) return;
    document.cookie = name + "=" + value + "; path=/; max-age=31536000; SameSite=Lax";
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
    root.querySelectorAll("[data-number]").forEach(function (el) {
      var written = el.getAttribute("data-number");
      if (!/^-?\d+(\.\d+)?$/.test(written)) return;
      var decimals = (written.split(".")[1] || "").length;
      el.textContent = new Intl.NumberFormat(undefined, { minimumFractionDigits: decimals, maximumFractionDigits: decimals })
        .format(Number(written));
    });
    root.querySelectorAll("input[data-date-example]").forEach(function (input) {
      input.placeholder = example(input.hasAttribute("data-with-time"));
    });
    var zone = document.getElementById("timeline-zone");
    if (zone && !zone.hasAttribute("data-done")) {
      zone.textContent = "Times in " + (zoneName || "your time zone") + "; point at one for UTC.";
      zone.setAttribute("data-done", "");
    }
  }

  remember("wfapp_tz", zoneName);
  var order = dateOrder();
  if (/^(dmy|mdy|ymd)$/.test(order)) remember("wfapp_dates", order);
  document.addEventListener("htmx:load", function (event) { localize(event.target); });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", function () { localize(document); });
  else localize(document);
})();
