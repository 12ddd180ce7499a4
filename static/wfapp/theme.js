// The colour theme chosen in the top bar's #theme-choice ("system", "light" or "dark"), kept in
// this browser (localStorage) and set on <html data-theme> before the page is drawn (this
// script is loaded without defer, in <head>); "system" follows the system's light or dark.
(function () {
  "use strict";
  var KEY = "wfapp-theme";
  function stored() {
    try { return window.localStorage.getItem(KEY) || "system"; } catch (e) { return "system"; }
  }
  function apply(theme) {
    if (theme === "light" || theme === "dark") document.documentElement.setAttribute("data-theme", theme);
    else document.documentElement.removeAttribute("data-theme");
  }
  apply(stored());
  document.addEventListener("DOMContentLoaded", function () {
    var choice = document.getElementById("theme-choice");
    if (!choice) return;
    choice.value = stored();
    choice.addEventListener("change", function () {
      try { window.localStorage.setItem(KEY, choice.value); } catch (e) { /* private mode: this page only */ }
      apply(choice.value);
    });
  });
})();
