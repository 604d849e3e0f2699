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
