// Keyboard triage on pages that include templates/wfapp/keys.html: j / k move between the
// inbox's open cards (in the list view, between its lines: the line is selected and its card
// opens, as a click does, static/wfapp/inbox_list.js), a / r approve or reject the focused card when its question allows a
// yes-or-no answer (the card has a bulk checkbox) after a few seconds to undo (static/wfapp/undo.js),
// x ticks it for bulk, b goes to the bulk bar,
// / focuses the page's search field and ? opens the list of keys (Escape closes it). Keys do
// nothing while typing in a field or with Ctrl, Alt or Meta held. What happened is said in
// #keys-status, a polite live region.
(function () {
  "use strict";
  var CARDS = ".inbox-item:not(.answered)";

  function say(text) {
    var status = document.getElementById("keys-status");
    if (!status) return;
    status.textContent = ""; // the same words twice are announced twice
    window.setTimeout(function () { status.textContent = text; }, 50);
  }

  function typing(target) {
    if (!target || !target.closest) return false;
    if (target.isContentEditable) return true;
    var field = target.closest("input, textarea, select");
    if (!field) return false;
    return !/^(checkbox|radio|button|submit|reset)$/.test(field.type || "");
  }

  function cards() {
    return Array.prototype.slice.call(document.querySelectorAll(CARDS));
  }

  function current() {
    var active = document.activeElement;
    return active && active.closest ? active.closest(CARDS) : null;
  }

  function label(card) {
    var message = card.querySelector(".message");
    return message ? message.innerText.trim() : "";
  }

  // Focus goes to the card, or in the list view to its line, which is selected and opens it.
  function bring(card) {
    var list = window.wfappInboxList;
    if (list && list.shown() && card.querySelector(".row-line")) {
      list.select(card);
      return;
    }
    card.setAttribute("tabindex", "-1");
    card.focus();
    card.scrollIntoView({ block: "nearest" });
  }

  function focusCard(card, all) {
    bring(card);
    say("Question " + (all.indexOf(card) + 1) + " of " + all.length + ": " + label(card));
  }

  function move(step) {
    var all = cards();
    if (!all.length) { say("No open questions."); return; }
    var here = current();
    var index = here ? all.indexOf(here) + step : (step > 0 ? 0 : all.length - 1);
    if (index < 0 || index >= all.length) {
      say(step > 0 ? "This is the last question shown." : "This is the first question.");
      return;
    }
    focusCard(all[index], all);
  }

  // After a/r the answered card is replaced (by the answer's response, or live): focus goes
  // on to the card after it. Refused with field errors, the card keeps its form and the focus.
  var answering = null;
  var watcher = new MutationObserver(function () {
    if (!answering) return;
    var card = document.getElementById(answering.id);
    if (card && card.matches(CARDS)) {
      var errors = card.querySelector(".form-status, .errors, .notice[role='alert']"); // a refusal too
      if (!errors) return; // still on its way
      finish();
      bring(card);
      say("Not sent: " + errors.innerText.trim());
      return;
    }
    var closed = card ? card.querySelector(".closed-status") : null;
    var next = answering.next && document.body.contains(answering.next) && answering.next.matches(CARDS)
      ? answering.next : cards()[0];
    finish();
    if (next) bring(next);
    say((closed ? closed.innerText.trim() + " " : "") + (next ? "Next: " + label(next) : "No open questions left."));
  });
  function finish() {
    answering = null;
    watcher.disconnect();
  }

  function decide(approve) {
    var card = current();
    if (!card) { say("Move to a question first with j or k."); return; }
    var button = card.querySelector(".decision button." + (approve ? "approve" : "reject"));
    var refusal = card.querySelector(".refusal");
    if (refusal) { say("Not yours to answer: " + refusal.innerText.trim()); return; }
    if (!card.querySelector(".bulk-select") || !button) {
      say("This question needs its form: fill it in and send it.");
      return;
    }
    var text = (approve ? "Approving: " : "Rejecting: ") + label(card);
    function send() {
      if (!document.body.contains(button)) { say("Not sent: this question closed meanwhile."); return; }
      var all = cards();
      answering = { id: card.id, next: all[all.indexOf(card) + 1] || all[all.indexOf(card) - 1] || null };
      watcher.observe(document.body, { childList: true, subtree: true });
      card.querySelectorAll(".notice[role='alert']").forEach(function (old) { old.remove(); }); // an earlier refusal
      button.click();
    }
    // A few seconds to undo (u) before it is sent; a reason typed meanwhile goes with a rejection.
    say(text + (window.wfappUndo ? ". Press u to undo." : ""));
    if (window.wfappUndo) window.wfappUndo.later(text, send); else send();
  }

  function tick() {
    var card = current();
    var box = card && card.querySelector(".bulk-select input");
    if (!box) { say(card ? "This question cannot be answered in bulk." : "Move to a question first with j or k."); return; }
    box.checked = !box.checked;
    var count = document.querySelectorAll('.bulk-select input[form="bulk-form"]:checked').length;
    say((box.checked ? "Ticked. " : "Unticked. ") + count + " ticked; b goes to the bulk bar.");
  }

  function bulkBar() {
    var first = document.querySelector("#bulk-form button[value='approve']");
    if (!first) { say("There is no bulk bar: nothing to answer in bulk."); return; }
    var count = document.querySelectorAll('.bulk-select input[form="bulk-form"]:checked').length;
    first.focus();
    first.scrollIntoView({ block: "nearest" });
    say("Bulk bar: " + count + " ticked.");
  }

  function search() {
    var field = document.querySelector("[role='search'] input[type='search']");
    if (!field) return false;
    field.focus();
    field.select();
    return true;
  }

  function help() {
    var dialog = document.getElementById("keys-help");
    if (dialog && !dialog.open) dialog.showModal();
  }

  document.addEventListener("click", function (event) {
    var close = event.target.closest && event.target.closest("[data-keys-close]");
    if (close) close.closest("dialog").close();
  });

  var inbox = { j: function () { move(1); }, k: function () { move(-1); },
    a: function () { decide(true); }, r: function () { decide(false); }, x: tick, b: bulkBar };

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    if (typing(event.target)) return;
    if (document.querySelector("dialog[open]")) return; // the dialog has its own keys (Escape)
    var key = event.key;
    if (key === "?") { event.preventDefault(); help(); return; }
    if (key === "/") { if (search()) event.preventDefault(); return; }
    var action = inbox[key];
    if (action && document.getElementById("inbox-list")) {
      event.preventDefault();
      action();
    }
  });
})();
