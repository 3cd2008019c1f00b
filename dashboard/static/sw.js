// kosti service worker: makes the dashboard installable (PWA) and keeps the page shell for a flaky Wi-Fi.
// The game itself is always live: /api, /ws and the video are never cached (a stale score would mislead).
"use strict";
const SHELL = "kosti-shell-v1";
const FILES = ["/", "/tv", "/static/app.js", "/static/style.css", "/static/icon-192.png", "/manifest.webmanifest"];

self.addEventListener("install", (e) => {
  e.waitUntil(caches.open(SHELL).then((c) => c.addAll(FILES)).then(() => self.skipWaiting()));
});
self.addEventListener("activate", (e) => {
  e.waitUntil(caches.keys().then((keys) => Promise.all(keys.filter((k) => k !== SHELL).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});
self.addEventListener("fetch", (e) => {
  const url = new URL(e.request.url);
  if (e.request.method !== "GET" || url.origin !== location.origin || !FILES.includes(url.pathname)) return;
  // network first (a new version of the page is used at once), the cached shell when the network is down
  e.respondWith(fetch(e.request).then((r) => {
    const copy = r.clone();
    caches.open(SHELL).then((c) => c.put(e.request, copy));
    return r;
  }).catch(() => caches.match(e.request)));
});
