// The run page's compare panel: an event's "#" link shows the run's state as of it (htmx swaps
// the panel; the server puts the selection in the address bar). With "Compare" ticked, the next
// "#" picked is diffed against the event shown. Live updates only append to the timeline, so
// the selection and its marks stay as they are.
(function () {
  "use strict";

  function mark() {
    var panel = document.getElementById("run-compare");
    document.querySelectorAll("#timeline li.is-at, #timeline li.is-from").forEach(function (li) {
      li.classList.remove("is-at", "is-from");
    });
    document.querySelectorAll("#timeline a.seq-link[aria-current]").forEach(function (a) {
      a.removeAttribute("aria-current");
    });
    if (!panel) return;
    var at = panel.getAttribute("data-at");
    var from = panel.getAttribute("data-from");
    var atItem = at && document.getElementById("event-" + at);
    if (atItem) {
      atItem.classList.add("is-at");
      var link = atItem.querySelector("a.seq-link");
      if (link) link.setAttribute("aria-current", "true");
    }
    var fromItem = from && document.getElementById("event-" + from);
    if (fromItem) fromItem.classList.add("is-from");
  }

  document.addEventListener("htmx:configRequest", function (event) {
    var elt = event.detail.elt;
    if (!elt.classList || !elt.classList.contains("seq-link")) return;
    var mode = document.getElementById("compare-mode");
    var panel = document.getElementById("run-compare");
    var at = panel && panel.getAttribute("data-at");
    if (mode && mode.checked && at) event.detail.parameters["from"] = at;
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail.target;
    if (target && (target.id === "run-compare" || target.id === "timeline")) mark();
  });
  document.addEventListener("htmx:oobAfterSwap", mark);
  document.addEventListener("DOMContentLoaded", mark);
})();
