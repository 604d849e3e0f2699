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
