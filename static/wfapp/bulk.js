// Inbox bulk bar: "Select all shown" ticks every item that can be bulk-answered on the page,
// and clears itself once a bulk answer went through (the answered items lose their boxes).
// Approve selected / Reject selected are sent after a few seconds to undo (static/wfapp/undo.js).
(function () {
  "use strict";
  var passing = null; // the button whose click the undo window let through
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("#bulk-form button[type='submit']");
    if (!button || button === passing || !window.wfappUndo) return;
    var ticked = document.querySelectorAll('.bulk-select input[form="bulk-form"]:checked').length;
    if (!ticked) return; // nothing to take back: the server says to tick some first
    event.preventDefault();
    event.stopPropagation();
    var verb = button.value === "reject" ? "Rejecting " : "Approving ";
    window.wfappUndo.later(verb + ticked + " ticked question" + (ticked === 1 ? "" : "s"), function () {
      passing = button;
      button.click();
      passing = null;
    });
  }, true);
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
