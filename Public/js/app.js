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

// A member's time zone (their digest's 07:00, their quiet hours) comes from the browser: put in
// the sign-up form, picked in the settings list while none was set, and sent once from any page
// of a member who never had one (the header's data-time-zone-unset-member).
(function () {
  if (!window.Intl) return;
  var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!zone) return;
  document.querySelectorAll("[data-detect-time-zone]").forEach(function (field) {
    if (field.tagName !== "SELECT") { if (!field.value) field.value = zone; return; }
    if (Array.prototype.some.call(field.options, function (option) { return option.value === zone; })) field.value = zone;
  });
  var list = document.querySelector("select[name=time_zone]"), shown = document.querySelector("[data-time-zone]");
  function show() { if (list && shown && list.selectedIndex >= 0) shown.textContent = list.options[list.selectedIndex].textContent; }
  if (list) { show(); list.addEventListener("change", show); }
  if (document.querySelector("[data-time-zone-unset-member]") && window.fetch && window.URLSearchParams) {
    var body = new URLSearchParams();
    body.append("time_zone", zone);
    fetch("/settings/time-zone", { method: "POST", body: body, credentials: "same-origin" }).catch(function () {});
  }
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

// A photo waiting for a moderator comes blurred; its Show button (hidden without scripts)
// shows it to this reader only.
(function () {
  document.querySelectorAll("[data-show-photo][hidden]").forEach(function (button) { button.hidden = false; });
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("[data-show-photo]") : null;
    var figure = button && button.closest("figure");
    if (!figure) return;
    var image = figure.querySelector("img[data-blurred]");
    if (image) image.removeAttribute("data-blurred");
    figure.classList.remove("is-blurred");
    button.closest("figcaption").hidden = true;
  });
})();

// The post form's photo: a preview, and a photo larger than the site takes (or than a board
// shows) made smaller here before it is sent (a phone's 12-megapixel photo in a few hundred KB).
// Without scripts the photo is sent as it is and the server says if it is too large.
(function () {
  var input = document.querySelector("input[type=file][name=photo]");
  var preview = document.querySelector("[data-photo-preview]");
  if (!input || !window.URL || !URL.createObjectURL) return;
  var maxBytes = parseInt(input.getAttribute("data-max-bytes"), 10) || 12 * 1024 * 1024;
  var longest = 2560;
  input.addEventListener("change", function () {
    var file = input.files && input.files[0];
    input.setCustomValidity("");
    if (preview) { preview.hidden = true; preview.removeAttribute("src"); }
    if (!file) return;
    var url = URL.createObjectURL(file);
    var image = new Image();
    image.onload = function () {
      if (preview) { preview.src = url; preview.hidden = false; }
      var scale = Math.min(1, longest / Math.max(image.naturalWidth, image.naturalHeight));
      if (scale >= 1 && file.size <= maxBytes / 4) return;
      if (!window.DataTransfer || !HTMLCanvasElement.prototype.toBlob) return;
      var canvas = document.createElement("canvas");
      canvas.width = Math.round(image.naturalWidth * scale);
      canvas.height = Math.round(image.naturalHeight * scale);
      canvas.getContext("2d").drawImage(image, 0, 0, canvas.width, canvas.height);
      canvas.toBlob(function (blob) {
        if (!blob || blob.size >= file.size) return;
        var smaller = new DataTransfer();
        smaller.items.add(new File([blob], file.name.replace(/\.[^.]*$/, "") + ".jpg", { type: "image/jpeg" }));
        input.files = smaller.files;
      }, "image/jpeg", 0.85);
    };
    image.onerror = function () {
      // A format this browser cannot show (HEIC outside Safari): sent as it is, if it fits.
      if (file.size > maxBytes) input.setCustomValidity(input.getAttribute("data-too-large") || "");
    };
    image.src = url;
    if (file.size > maxBytes && !window.DataTransfer) input.setCustomValidity(input.getAttribute("data-too-large") || "");
  });
})();
