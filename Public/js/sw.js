// The service worker. Navigations go to the network as if there were no worker; when the
// network is gone they get the offline page kept at install. The stylesheet it needs is kept
// too and served from the cache only when the network fails.
"use strict";
var CACHE = "weatherboard-v1";
var OFFLINE = "/offline";
var KEPT = [OFFLINE, "/static/css/site.css"];

self.addEventListener("install", function (event) {
  event.waitUntil(caches.open(CACHE).then(function (cache) { return cache.addAll(KEPT); }).then(function () {
    return self.skipWaiting();
  }));
});

self.addEventListener("activate", function (event) {
  event.waitUntil(caches.keys().then(function (keys) {
    return Promise.all(keys.filter(function (key) { return key !== CACHE; }).map(function (key) { return caches.delete(key); }));
  }).then(function () { return self.clients.claim(); }));
});

self.addEventListener("fetch", function (event) {
  var request = event.request;
  if (request.method !== "GET") return;
  if (request.mode === "navigate") {
    event.respondWith(fetch(request).catch(function () { return caches.match(OFFLINE); }));
  } else if (KEPT.indexOf(new URL(request.url).pathname) >= 0) {
    event.respondWith(fetch(request).catch(function () { return caches.match(request, { ignoreSearch: true }); }));
  }
});

// A push: the notice in the member's language (the site wrote it), opening its page on a click.
self.addEventListener("push", function (event) {
  var data = {};
  try { data = event.data ? event.data.json() : {}; } catch (e) { data = {}; }
  event.waitUntil(self.registration.showNotification(data.title || "Weatherboard", {
    body: data.body || "", lang: data.lang, tag: data.tag, icon: "/static/icons/icon-192.png", data: { url: data.url || "/" }
  }));
});

self.addEventListener("notificationclick", function (event) {
  event.notification.close();
  var url = new URL((event.notification.data && event.notification.data.url) || "/", self.location.origin).href;
  event.waitUntil(self.clients.matchAll({ type: "window" }).then(function (open) {
    for (var i = 0; i < open.length; i++) if (open[i].url === url && "focus" in open[i]) return open[i].focus();
    return self.clients.openWindow(url);
  }));
});
