// Copy buttons: <button data-copy="#id"> copies the text of the element #id to the clipboard and
// says so in its data-copy-status element (a polite live region), or asks to copy by hand.
(function () {
  "use strict";
  function said(button, text) {
    var status = document.getElementById(button.getAttribute("data-copy-status"));
    if (status) status.textContent = text;
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.querySelector(button.getAttribute("data-copy"));
    if (!source) return;
    var text = source.textContent.trim();
    var done = function () { said(button, "Copied."); };
    var byHand = function () {
      var range = document.createRange();
      range.selectNodeContents(source);
      window.getSelection().removeAllRanges();
      window.getSelection().addRange(range);
      said(button, "Selected: press Ctrl+C (or Cmd+C) to copy it.");
    };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, byHand);
    else byHand();
  });
})();
