// Live pages: tell the server what this page has already seen when its socket (re)opens, so a
// reconnect receives exactly what it missed. The page keeps its position in #live-hello; the
// question cards it shows as open go along, so the server can close each one that stops pending.
(function () {
  "use strict";
  var opened = new WeakSet();
  var socket = null; // the page's open socket, for requests other than hello

  function expandedNodes(toggled) {
    var names = [];
    document.querySelectorAll("[data-graph-toggle]").forEach(function (t) {
      var name = t.getAttribute("data-graph-toggle");
      if ((t.getAttribute("aria-expanded") === "true") !== (name === toggled)) names.push(name);
    });
    return names;
  }

  document.addEventListener("htmx:wsClose", function (event) {
    socket = null;
    // The server closed a socket that fell behind (wfapp.web.live.behind): 4408, open it again
    // (the hello says where the page was and brings what it missed); 4409, load the page again.
    var code = event.detail.event && event.detail.event.code;
    var wrapper = event.detail.socketWrapper;
    if (code === 4408) setTimeout(function () { wrapper.reconnect(); }, 500 + Math.random() * 2000);
    if (code === 4409) setTimeout(function () { location.reload(); }, 500 + Math.random() * 2000);
  });
  document.addEventListener("htmx:wsOpen", function (event) {
    socket = event.detail.socketWrapper;
    var elt = event.detail.elt;
    var hello = {};
    var marker = document.getElementById("live-hello");
    if (marker) {
      try { hello = JSON.parse(marker.getAttribute("data-hello") || "{}"); } catch (e) { hello = {}; }
    }
    hello.type = "hello";
    hello.reconnect = opened.has(elt);
    hello.open = [];
    document.querySelectorAll(".inbox-item[id^='interrupt-']:not(.answered)").forEach(function (card) {
      hello.open.push(parseInt(card.id.slice("interrupt-".length), 10));
    });
    hello.open = hello.open.slice(0, 200);
    hello.expand = expandedNodes(null).slice(0, 10);
    var text = JSON.stringify(hello);
    if (text.length > 4000) { hello.expand = []; hello.open = hello.open.slice(0, 100); text = JSON.stringify(hello); }
    opened.add(elt);
    event.detail.socketWrapper.send(text, elt); // the server ignores frames over 4 KB
  });

  // The graph's "+N more" / "Show fewer": a live page asks its socket for the graph with that
  // node's children listed (so later live updates keep it); without a socket the link reloads.
  var refocus = null;
  function toggleGraph(toggle, event) {
    if (!socket) return;
    event.preventDefault();
    refocus = toggle.getAttribute("data-graph-toggle");
    var expand = expandedNodes(refocus).slice(-10);
    socket.send(JSON.stringify({ type: "graph", expand: expand }), document.getElementById("live"));
  }
  document.addEventListener("click", function (event) {
    var toggle = event.target.closest && event.target.closest("[data-graph-toggle]");
    if (toggle) toggleGraph(toggle, event);
  });
  document.addEventListener("keydown", function (event) {
    var toggle = event.target.closest && event.target.closest("[data-graph-toggle]");
    if (toggle && (event.key === " " || event.key === "Enter")) toggleGraph(toggle, event);
  });
  document.addEventListener("htmx:oobAfterSwap", function () {
    if (refocus === null) return;
    var again = document.querySelector('[data-graph-toggle="' + CSS.escape(refocus) + '"]');
    if (again) { again.focus(); refocus = null; }
  });

  // A card closed live (someone else answered, the run moved on) while its form holds what this
  // person typed keeps the form, read-only, under the notice that says why nothing was sent.
  function hasDraft(form) {
    if (form.hasAttribute("data-invalid")) return true; // re-rendered with what was typed
    return Array.prototype.some.call(form.elements, function (field) {
      if (field.type === "hidden" || field.tagName === "BUTTON") return false;
      if (field.type === "checkbox" || field.type === "radio") return field.checked !== field.defaultChecked;
      if (field.tagName === "SELECT") {
        return Array.prototype.some.call(field.options, function (o) { return o.selected !== o.defaultSelected; });
      }
      return field.value !== field.defaultValue;
    });
  }

  function keepDraft(card, form, notice) {
    notice.querySelectorAll(".draft-note").forEach(function (note) { note.hidden = false; });
    card.classList.add("answered", "kept-draft");
    card.querySelectorAll(".bulk-select, .closed-status").forEach(function (old) { old.remove(); });
    form.parentNode.insertBefore(notice, form);
    Array.prototype.forEach.call(form.elements, function (field) {
      if (field.tagName === "INPUT" && !/^(checkbox|radio|hidden|submit|button)$/.test(field.type)) {
        field.readOnly = true;
      } else if (field.tagName === "TEXTAREA") {
        field.readOnly = true;
      } else if (field.type !== "hidden") {
        field.disabled = true;
      }
    });
    form.setAttribute("aria-disabled", "true");
  }

  document.addEventListener("htmx:oobBeforeSwap", function (event) {
    var card = event.detail.target;
    if (event.detail.target.id === "runs-body") {
      // A new run's row: the page may already show it (it was rendered while the run started).
      event.detail.fragment.querySelectorAll("tr[id]").forEach(function (row) {
        var shown = document.getElementById(row.id);
        if (shown) shown.remove();
      });
      return;
    }
    if (!card.classList || !card.classList.contains("inbox-item")) return;
    if (card.classList.contains("answered")) {
      event.detail.shouldSwap = false; // closed already: it keeps what it says (and any draft)
      return;
    }
    var form = card.querySelector("form.schema-form");
    if (!form) return;
    if (form.classList.contains("htmx-request")) {
      // An answer from this page is on its way: its response replaces the card (with who
      // answered, or why not). Swapping now would detach the form and lose that response.
      event.detail.shouldSwap = false;
      return;
    }
    if (!hasDraft(form)) return; // nothing typed: the closed card simply replaces the form
    var notice = event.detail.fragment.querySelector(".closed-status");
    if (!notice) return;
    keepDraft(card, form, notice);
    event.detail.shouldSwap = false;
  });

  // Cards arriving on a run page whose section was hidden (the run had finished) show it again.
  document.addEventListener("htmx:oobAfterSwap", function (event) {
    var section = document.getElementById("run-asks-section");
    if (section && section.hidden && document.querySelector("#run-asks > .inbox-item")) section.hidden = false;
  });

  // After answering, focus goes to the next open card (else the previous, else the answered
  // one), not to the page body: the answered form, and the focused button with it, are gone.
  var answering = {};
  document.addEventListener("htmx:beforeRequest", function (event) {
    var card = event.detail.elt.closest && event.detail.elt.closest(".inbox-item");
    if (card && card.id) answering[card.id] = true;
  });
  function nextOpen(card) {
    var cards = Array.prototype.slice.call(document.querySelectorAll(".inbox-item"));
    var at = cards.indexOf(card);
    var open = function (c) { return !c.classList.contains("answered"); };
    return cards.slice(at + 1).find(open) || cards.slice(0, at).reverse().find(open) || card;
  }
  function focusAfterAnswer() {
    Object.keys(answering).forEach(function (id) {
      var card = document.getElementById(id);
      if (card && !card.classList.contains("answered")) return; // not swapped yet, or refused: still open
      delete answering[id];
      var active = document.activeElement;
      if (!card || (active && active !== document.body && document.contains(active))) return; // focus was kept
      var next = nextOpen(card);
      if (!next.hasAttribute("tabindex")) next.setAttribute("tabindex", "-1");
      next.focus();
    });
  }
  document.addEventListener("htmx:afterSettle", focusAfterAnswer);

  // A form a live update rendered has no CSRF token (a socket has no request to render one
  // from): a plain POST form without one takes the page's token (the one htmx sends) as it goes.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || form.method !== "post") return;
    if (form.querySelector("input[name='csrfmiddlewaretoken']")) return;
    var token = "";
    try { token = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || ""; } catch (e) { token = ""; }
    if (!token) return;
    var field = document.createElement("input");
    field.type = "hidden";
    field.name = "csrfmiddlewaretoken";
    field.value = token;
    form.appendChild(field);
  }, true);
  document.addEventListener("htmx:afterRequest", function (event) {
    // A refused answer (field errors) keeps its card open: nothing to move.
    if (event.detail.failed) return;
    setTimeout(focusAfterAnswer, 50);
  });
})();
