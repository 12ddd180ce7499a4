// The inbox's list view: a question's line opens its whole card (beside the list on a wide
// screen, below its line on a narrow one); opening another closes it. The open card's line is
// the selection (aria-current), which j / k move too (static/wfapp/keys.js, through
// window.wfappInboxList). Lines that arrive live work the same (the click is handled on the
// document), and a selected card that is replaced while open (Claim, Release, a live update)
// stays open and selected.
(function () {
  "use strict";

  function lineOf(card) {
    return card.querySelector(".row-line");
  }

  var selected = null; // the id of the open card

  // Open `card` (close it when `opening` is false), closing every other one in its list.
  function open(card, opening) {
    selected = opening ? card.id : null;
    var list = card.parentElement;
    list.querySelectorAll(".inbox-item.open").forEach(function (other) {
      if (other === card) return;
      other.classList.remove("open");
      var button = lineOf(other);
      if (button) {
        button.setAttribute("aria-expanded", "false");
        button.removeAttribute("aria-current");
      }
    });
    var line = lineOf(card);
    card.classList.toggle("open", opening);
    if (line) {
      line.setAttribute("aria-expanded", opening ? "true" : "false");
      if (opening) line.setAttribute("aria-current", "true"); else line.removeAttribute("aria-current");
    }
    list.classList.toggle("has-open", opening);
  }

  function shown() {
    return !!document.querySelector(".inbox-list.as-list");
  }

  // Select a card by keyboard: its card opens, focus goes to its line.
  function select(card) {
    open(card, true);
    var line = lineOf(card);
    if (!line) return;
    line.focus();
    line.scrollIntoView({ block: "nearest" });
  }

  window.wfappInboxList = { shown: shown, open: open, select: select };

  // The selected card replaced by a new one (its Claim button's response, say): opened again,
  // and the focus, lost with the old card, back on its line. An answered card is not reopened.
  new MutationObserver(function () {
    if (!selected || !shown()) return;
    var card = document.getElementById(selected);
    if (!card || card.classList.contains("open")) return;
    if (card.classList.contains("answered") || !lineOf(card)) { selected = null; return; }
    open(card, true);
    if (document.activeElement === document.body || !document.activeElement) {
      lineOf(card).focus({ preventScroll: true });
    }
  }).observe(document.body, { childList: true, subtree: true });

  document.addEventListener("click", function (event) {
    var line = event.target.closest && event.target.closest(".as-list .row-line");
    if (!line) return;
    var card = line.closest(".inbox-item");
    open(card, !card.classList.contains("open"));
  });
})();
