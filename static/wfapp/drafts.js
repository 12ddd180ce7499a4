// Logged out mid-page: the server answers an htmx request with 401 and HX-Redirect to the login
// page (htmx then navigates). Just before, every form on the page with something typed in it is
// kept in sessionStorage under the page's address; back on that page after logging in, the
// forms still there get what was typed again, marked as not sent. Nothing is sent by itself.
(function () {
  "use strict";
  var KEY = "wfapp-drafts";
  var SKIP = /^(hidden|password|file|submit|button|reset|image)$/;

  function here() { return location.pathname + location.search; }

  function typed(field) {
    if (field.type === "checkbox" || field.type === "radio") return field.checked !== field.defaultChecked;
    if (field.tagName === "SELECT") {
      return Array.prototype.some.call(field.options, function (o) { return o.selected !== o.defaultSelected; });
    }
    return field.value !== field.defaultValue;
  }

  function fields(form) {
    return Array.prototype.filter.call(form.elements, function (field) {
      return field.name && !SKIP.test(field.type) && field.tagName !== "BUTTON" && !field.disabled;
    });
  }

  function snapshot(form) {
    var values = [];
    fields(form).forEach(function (field) {
      if (field.type === "checkbox" || field.type === "radio") {
        if (field.checked) values.push([field.name, field.value]);
      } else if (field.tagName === "SELECT") {
        Array.prototype.forEach.call(field.selectedOptions, function (o) { values.push([field.name, o.value]); });
      } else {
        values.push([field.name, field.value]);
      }
    });
    return values;
  }

  function keep() {
    var drafts = {};
    document.querySelectorAll("form[id]").forEach(function (form) {
      if (fields(form).some(typed)) drafts[form.id] = snapshot(form);
    });
    if (!Object.keys(drafts).length) return;
    try {
      sessionStorage.setItem(KEY, JSON.stringify({ page: here(), forms: drafts }));
    } catch (e) { /* storage full or refused: the redirect still happens */ }
  }

  function restore() {
    var saved = null;
    try { saved = JSON.parse(sessionStorage.getItem(KEY) || "null"); } catch (e) { saved = null; }
    if (!saved || saved.page !== here()) return; // still on the login page, or somewhere else
    sessionStorage.removeItem(KEY);
    Object.keys(saved.forms || {}).forEach(function (id) {
      var form = document.getElementById(id);
      if (!form || form.tagName !== "FORM") return; // the question closed meanwhile
      var values = saved.forms[id];
      var used = {};
      fields(form).forEach(function (field) {
        var mine = values.filter(function (pair) { return pair[0] === field.name; });
        if (field.type === "checkbox" || field.type === "radio") {
          field.checked = mine.some(function (pair) { return pair[1] === field.value; });
        } else if (field.tagName === "SELECT") {
          Array.prototype.forEach.call(field.options, function (o) {
            o.selected = mine.some(function (pair) { return pair[1] === o.value; });
          });
        } else {
          var next = used[field.name] || 0; // fields sharing a name get their values in order
          if (next < mine.length) field.value = mine[next][1];
          used[field.name] = next + 1;
        }
      });
      var note = document.createElement("p");
      note.className = "notice draft-restored";
      note.setAttribute("role", "status");
      note.textContent = "Your session had ended: this is what you typed before logging in again. It has not been sent.";
      form.insertBefore(note, form.firstChild);
    });
  }

  document.addEventListener("htmx:beforeOnLoad", function (event) {
    if (event.detail.xhr && event.detail.xhr.status === 401) keep();
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", restore);
  else restore();
})();
