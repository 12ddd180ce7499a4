// A refusal the server sends lands on top of the form it refused (wfapp.web.http.notice, swapped
// "afterbegin"). A newer one replaces the one before it, so a card never shows two reasons at
// once and the one it shows is the latest.
(function () {
  "use strict";
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    if (!target || event.detail.xhr.status < 400) return;
    target.querySelectorAll(":scope > .notice[role='alert']").forEach(function (old) { old.remove(); });
  });
})();
