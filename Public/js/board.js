// The board's small helps; without scripts everything still works (the server checks the limit
// and gives the text back when it is over, and a report menu closes by its summary).
(function () {
  // A live count under boxes with a limit: "12 / 500", counted as the server counts (code points:
  // an emoji is one, where `maxlength` and `value.length` count two UTF-16 units and stopped
  // emoji posts well short of the limit).
  // The visible count changes silently; a screen reader hears it only near the limit (the last
  // 50) and past it, once per step, not at every keystroke.
  document.querySelectorAll("textarea[data-limit][data-count]").forEach(function (box) {
    var out = document.getElementById(box.dataset.count);
    if (!out) return;
    var alert = document.createElement("span");
    alert.className = "visually-hidden";
    alert.setAttribute("aria-live", "polite");
    out.after(alert);
    var said = "";
    var update = function () {
      var used = Array.from(box.value).length;
      var limit = Number(box.dataset.limit);
      out.textContent = used + " / " + box.dataset.limit;
      out.classList.toggle("over", used > limit);
      var step = used > limit ? "over" : (used >= limit - 50 ? "near" : "");
      if (step !== said) {
        said = step;
        alert.textContent = step ? out.textContent : "";
      }
    };
    box.addEventListener("input", update);
    update();
  });
  // A city page still waiting for its first forecast looks again by itself: a reload every 20 s,
  // at most 6 times for one address (the count is kept for this tab only), so a page left open
  // while the weather service is down does not reload forever.
  if (document.querySelector("[data-weather-pending]")) {
    var key = "weather-pending " + location.pathname;
    var tries = Number(sessionStorage.getItem(key) || "0");
    if (tries < 6) {
      setTimeout(function () {
        sessionStorage.setItem(key, String(tries + 1));
        location.reload();
      }, 20000);
    }
  } else {
    sessionStorage.removeItem("weather-pending " + location.pathname);
  }
  // Delete with a moment to take it back (issue 26 #4): with scripts, Delete hides the post at
  // once and offers Undo in its place for five seconds; then the deletion is sent as the confirm
  // page's form would send it. Leaving the page within the five seconds sends it too. Without
  // scripts, Delete asks first on a page of its own.
  var undoFor = 5000;
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches("form.delete-form") || !window.fetch) return;
    var article = form.closest("article");
    if (!article) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    var note = document.createElement("div");
    note.className = "flash deleted-note";
    note.setAttribute("role", "status");
    var text = document.createElement("span");
    text.textContent = form.dataset.deleted;
    var undo = document.createElement("button");
    undo.type = "button";
    undo.className = "link";
    undo.textContent = form.dataset.undo;
    note.append(text, " ", undo);
    article.hidden = true;
    article.before(note);
    undo.focus({ preventScroll: true });
    var body = new URLSearchParams();
    var sent = false;
    function send() {
      if (sent) return;
      sent = true;
      window.removeEventListener("pagehide", onLeave);
      undo.remove();
      fetch(form.action, { method: "POST", body: body, credentials: "same-origin", redirect: "manual" }).then(function (answer) {
        if (answer.type === "opaqueredirect" || answer.ok) { article.remove(); return; }
        location.assign(form.action); // refused (reports wait for review, the window closed): the page says why
      }, function () { location.assign(form.action); });
    }
    function onLeave() { if (!sent) { sent = true; navigator.sendBeacon(form.action, body); } }
    var timer = setTimeout(send, undoFor);
    window.addEventListener("pagehide", onLeave);
    undo.addEventListener("click", function () {
      clearTimeout(timer);
      window.removeEventListener("pagehide", onLeave);
      note.remove();
      article.hidden = false;
      var again = form.querySelector("button");
      if (again) again.focus({ preventScroll: true });
    });
  }, true);
  // Agree and bookmark change in place (issue 45 #7): the form is sent by fetch asking for JSON,
  // and the button says the outcome; the page neither reloads nor moves. Anything else (a limit,
  // an error, no network) sends the form itself, and the page that comes back says why.
  function inPlace(form, changed) {
    var body = new URLSearchParams(new FormData(form));
    fetch(form.action, { method: "POST", body: body, credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (answer) { return answer.ok ? answer.json() : Promise.reject(answer.status); })
      .then(changed, function () { form.submit(); });
  }
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!window.fetch || !window.FormData) return;
    if (form.matches("form.react")) {
      event.preventDefault();
      inPlace(form, function (outcome) {
        var button = form.querySelector("button"), count = form.querySelector(".reaction-count");
        button.setAttribute("aria-pressed", outcome.agreed ? "true" : "false");
        if (count) { count.textContent = outcome.count; count.dataset.reactions = outcome.count; }
      });
    } else if (form.matches("form.bookmark[data-add]")) {
      event.preventDefault();
      inPlace(form, function (outcome) {
        var button = form.querySelector("button"), said = form.querySelector("[data-bookmark-said]");
        form.action = outcome.bookmarked ? form.dataset.add + "/delete" : form.dataset.add;
        button.textContent = outcome.bookmarked ? form.dataset.removeLabel : form.dataset.addLabel;
        if (said) said.textContent = outcome.bookmarked ? form.dataset.added : form.dataset.removed;
      });
    }
  });
  // Drafts (issue 45 #7): what is typed in the post form is kept in this browser as it is typed,
  // for that board, until the post shows on it: a post sent while offline, or a page left by
  // mistake, finds its text again. A post the server refused comes back with its text anyway.
  var composer = document.getElementById("post-body");
  if (composer && window.localStorage) {
    var draftKey = "draft " + composer.form.getAttribute("action");
    var draft = null;
    try { draft = JSON.parse(localStorage.getItem(draftKey) || "null"); } catch (e) { draft = null; }
    if (draft && draft.sent) {
      // Sent from here: posted once a post of this board says it (the newest page shows it first).
      // Compared as the server keeps text (NFC; white space may differ).
      var same = function (text) { return text.normalize("NFC").replace(/\s+/g, " ").trim(); };
      var shown = Array.from(document.querySelectorAll("article.post:not([data-parent-id]) .post-body")).some(function (body) {
        return same(body.textContent) === same(draft.text);
      });
      if (shown) { localStorage.removeItem(draftKey); draft = null; }
    }
    if (draft && !composer.value) {
      composer.value = draft.text;
      composer.dispatchEvent(new Event("input"));
    }
    composer.addEventListener("input", function () {
      if (composer.value) localStorage.setItem(draftKey, JSON.stringify({ text: composer.value }));
      else localStorage.removeItem(draftKey);
    });
    composer.form.addEventListener("submit", function () {
      if (composer.value) localStorage.setItem(draftKey, JSON.stringify({ text: composer.value, sent: true }));
    });
  }
  // A form sends once: its button is disabled while the next page loads (a double tap on a slow
  // link sent the post twice), and enabled again when the page comes back from the cache.
  document.addEventListener("submit", function (event) {
    if (event.defaultPrevented) return; // sent in place: no page load to wait for
    var button = event.target.querySelector("button[type=submit]");
    if (button) setTimeout(function () { button.disabled = true; }, 0);
  });
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form button[type=submit][disabled]").forEach(function (button) { button.disabled = false; });
  });
  // Esc closes the innermost open menu (a report form, then the post's menu) and puts the focus
  // back on its summary.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    var menu = document.querySelector("details.report-menu[open]") || document.querySelector("details.post-menu[open]");
    if (!menu) return;
    menu.open = false;
    var summary = menu.querySelector("summary");
    if (summary) summary.focus();
  });
  // "Other" needs a few words: asked for in the menu itself, not after a trip to the report page.
  document.addEventListener("change", function (event) {
    var select = event.target.closest(".report-form select[name=reason]");
    if (select && select.form.elements.detail) select.form.elements.detail.required = select.value === "other";
  });
  // After an action on a post (agree, block, report, Undo) the page it leads back to opens where
  // the reader was, not at its top: the place is kept in this tab for that one address and used
  // once; an address with an anchor (#post-12) goes to the anchor instead.
  var here = location.pathname + location.search;
  document.addEventListener("submit", function (event) {
    if (!event.target.closest(".post-actions, .flash")) return;
    sessionStorage.setItem("place", JSON.stringify({ path: here, y: window.scrollY }));
  });
  // The language switch too: the same page in another language opens where the reader was.
  document.querySelectorAll(".lang-switch a").forEach(function (link) {
    link.addEventListener("click", function () {
      sessionStorage.setItem("place", JSON.stringify({ path: location.pathname, y: window.scrollY, anyQuery: true }));
    });
  });
  var place = null;
  try { place = JSON.parse(sessionStorage.getItem("place") || "null"); } catch (e) { place = null; }
  sessionStorage.removeItem("place");
  var placed = place && (place.path === here || (place.anyQuery && place.path === location.pathname)) && !location.hash;
  if (placed) window.scrollTo(0, place.y);
  // The message an action left takes the focus (a screen reader reads it), without moving the page.
  // Back at the reader's place, it sits there, in the page's flow before the first post in view
  // (without scripts it heads the page): in view, covering nothing, left behind on scrolling.
  var flash = document.querySelector(".flash");
  if (flash && placed && !place.anyQuery) {
    var posts = document.querySelectorAll("article.post:not([data-parent-id])");
    for (var i = 0; i < posts.length; i++) {
      if (posts[i].getBoundingClientRect().bottom > 0) {
        posts[i].before(flash);
        var top = flash.getBoundingClientRect().top;
        if (top < 0 || top > innerHeight / 2) window.scrollBy(0, top - 8);
        break;
      }
    }
  }
  // After posting (#post-N): the message goes just above the new post, and the focus to the post.
  var target = flash && /^#post-\d+$/.test(location.hash) && document.getElementById(location.hash.slice(1));
  if (target) {
    target.before(flash);
    target.setAttribute("tabindex", "-1");
    target.focus({ preventScroll: true });
    window.addEventListener("load", function () {
      if (document.activeElement === document.body) target.focus({ preventScroll: true });
    });
  } else if (flash) {
    flash.focus({ preventScroll: true });
    // Going to an anchor (#board) after the page loads leaves the focus on the page itself.
    window.addEventListener("load", function () {
      if (document.activeElement === document.body) flash.focus({ preventScroll: true });
    });
  }
})();
