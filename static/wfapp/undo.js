// A few seconds to take an answer back before it is sent (templates/wfapp/keys.html's
// #undo-bar, data-seconds): the a / r keys and the bulk bar's buttons hand their sending to
// wfappUndo.later(text, send). Undo (its button, or u / Escape when no field has the cursor)
// sends nothing; a second answer started meanwhile sends the first one at once.
(function () {
  "use strict";
  var pending = null;

  function bar() { return document.getElementById("undo-bar"); }

  function seconds() {
    var found = bar();
    var value = found ? parseFloat(found.getAttribute("data-seconds")) : 0;
    return isNaN(value) ? 0 : value;
  }

  function stop() {
    if (!pending) return null;
    var was = pending;
    window.clearInterval(was.tick);
    window.clearTimeout(was.timer);
    pending = null;
    return was;
  }

  function show(text, counting) {
    var found = bar();
    found.querySelector(".undo-text").textContent = text;
    found.querySelector("[data-undo]").hidden = !counting;
    found.hidden = false;
  }

  function later(text, send) {
    var earlier = stop();
    if (earlier) earlier.send();
    var wait = seconds();
    if (!bar() || wait <= 0) { send(); return; }
    var left = Math.ceil(wait);
    var count = bar().querySelector(".undo-count");
    pending = { send: send, text: text };
    show(text, true);
    count.textContent = " Sending in " + left + " s.";
    pending.tick = window.setInterval(function () {
      if (left > 1) { left -= 1; count.textContent = " Sending in " + left + " s."; }
    }, 1000);
    pending.timer = window.setTimeout(function () {
      var due = stop();
      bar().hidden = true;
      if (due) due.send();
    }, wait * 1000);
  }

  function undo() {
    var was = stop();
    if (!was) return false;
    bar().querySelector(".undo-count").textContent = "";
    show("Undone: " + was.text.replace(/[.:]?$/, "") + " was not sent.", false);
    return true;
  }

  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("[data-undo]")) undo();
  });
  document.addEventListener("keydown", function (event) {
    if (!pending || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key !== "u" && event.key !== "Escape") return;
    var field = event.target.closest && event.target.closest("input, textarea, select, [contenteditable]");
    if (field && event.key === "u") return; // typing a u
    if (undo()) event.preventDefault();
  });

  window.wfappUndo = { later: later, undo: undo };
})();
