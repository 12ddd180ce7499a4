// The API docs page (templates/wfapp/api_docs.html): what Swagger UI renders, made whole for
// assistive technology, again after each of its re-renders (an operation unfolded, say).
// - Its headings go from the title's h1 straight to h3 (the tags), then h4, h5: each h3 and
//   below is read one level up, so the outline has no gap.
// - Its example values scroll in a box nothing in it can focus: the box takes the focus itself,
//   so a keyboard can scroll it.
(function () {
  "use strict";
  var root = document.getElementById("swagger-ui");
  if (!root) return;

  function mend() {
    root.querySelectorAll("h3:not([aria-level]), h4:not([aria-level]), h5:not([aria-level]), h6:not([aria-level])")
      .forEach(function (heading) {
        heading.setAttribute("aria-level", String(Number(heading.tagName.charAt(1)) - 1));
      });
    root.querySelectorAll(".highlight-code > pre:not([tabindex])").forEach(function (example) {
      example.setAttribute("tabindex", "0");
    });
  }

  new MutationObserver(mend).observe(root, { childList: true, subtree: true });
  mend();
})();
