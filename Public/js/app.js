// Installs the service worker (the offline page); the site works the same without it.
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js").catch(function () {});
}

// On a phone, once the header has scrolled away, the notifications link floats (site.css) so
// that unread notices stay in reach; without scripts it stays in the header.
(function () {
  var link = document.querySelector(".notifications-link"), header = document.querySelector(".site-header");
  if (!link || !header || !("IntersectionObserver" in window)) return;
  new IntersectionObserver(function (entries) {
    link.classList.toggle("floating", !entries[0].isIntersecting);
  }).observe(header);
})();

// Quiet hours are kept in the member's own time zone: the browser knows it.
(function () {
  var field = document.querySelector("[data-detect-time-zone]"), shown = document.querySelector("[data-time-zone]");
  if (!field || field.value !== "UTC" || !window.Intl) return;
  var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!zone) return;
  field.value = zone;
  if (shown) shown.textContent = zone;
})();
