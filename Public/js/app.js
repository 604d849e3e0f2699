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

// A post by someone the reader muted comes collapsed; its Show button (hidden without scripts,
// where the line says whose post it is) opens it and moves focus to it.
(function () {
  document.querySelectorAll("[data-show-muted][hidden]").forEach(function (button) { button.hidden = false; });
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("[data-show-muted]") : null;
    var content = button && document.getElementById(button.getAttribute("aria-controls"));
    if (!content) return;
    content.hidden = false;
    button.setAttribute("aria-expanded", "true");
    button.closest(".muted-placeholder").hidden = true;
    content.tabIndex = -1;
    content.focus();
  });
})();
