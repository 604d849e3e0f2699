// Turns on push for this browser: permission, a subscription with the site's key, and the
// subscription handed to the site. The list below is the server's; the page reloads to show it.
(function () {
  "use strict";
  var button = document.querySelector("[data-push-enable]");
  if (!button) return;
  var box = document.querySelector("[data-push-error]");
  function say(text) { box.textContent = text; box.hidden = false; }
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
    say(button.dataset.unsupported);
    return;
  }
  function key(text) {
    var base64 = text.replace(/-/g, "+").replace(/_/g, "/");
    var raw = atob(base64 + "===".slice((base64.length + 3) % 4)), out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out;
  }
  button.hidden = false;
  button.addEventListener("click", function () {
    Notification.requestPermission().then(function (permission) {
      if (permission !== "granted") throw new Error("denied");
      return Promise.all([navigator.serviceWorker.ready, fetch("/push/key", { credentials: "same-origin" }).then(function (r) { return r.json(); })]);
    }).then(function (both) {
      return both[0].pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key(both[1].publicKey) });
    }).then(function (subscription) {
      return fetch("/push/subscriptions", {
        method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(subscription)
      });
    }).then(function (response) {
      if (!response.ok) throw new Error(String(response.status));
      location.reload();
    }).catch(function () { say(button.dataset.denied); });
  });
})();
