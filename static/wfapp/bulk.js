// Inbox bulk bar: "Select all shown" ticks every item that can be bulk-answered on the page,
// and clears itself once a bulk answer went through (the answered items lose their boxes).
(function () {
  "use strict";
  document.addEventListener("change", function (event) {
    if (event.target.id !== "bulk-all") return;
    document.querySelectorAll('input[name="ids"][form="bulk-form"]').forEach(function (box) {
      box.checked = event.target.checked;
    });
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var all = document.getElementById("bulk-all");
    if (all && event.detail.elt && event.detail.elt.id === "bulk-form") all.checked = false;
  });
})();
