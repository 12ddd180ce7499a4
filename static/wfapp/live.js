// Live pages: tell the server what this page has already seen when its socket (re)opens, so a
// reconnect receives exactly what it missed. The page keeps its position in #live-hello; the
// question cards it shows as open go along, so the server can close each one that stops pending.
(function () {
  "use strict";
  var opened = new WeakSet();
  document.addEventListener("htmx:wsOpen", function (event) {
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
    opened.add(elt);
    event.detail.socketWrapper.send(JSON.stringify(hello), elt);
  });
})();
