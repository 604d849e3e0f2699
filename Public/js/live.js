// Live boards: what the page's event stream (data-live) says happened, shown without a reload.
// New posts gather in a bar that shows them on request; new replies appear under their post;
// deleted and removed posts disappear; agreement counts change. Without scripts, or when the
// stream is refused, the page is the page the server sent.
(function () {
  var root = document.querySelector("[data-live]");
  if (!root || !window.EventSource || !window.fetch || !window.DOMParser) return;
  var onBoard = root.classList.contains("board");
  // This page's path, always on this site (a path starting "//" would name another host).
  var here = "/" + location.pathname.replace(/^[\/\\]+/, "");
  var olderPage = /[?&]before=/.test(location.search);
  // Where the page stands in the stream: rendered with it (data-live-position), then the last
  // event heard; a page that heard nothing still resumes from where it was made.
  var lastID = root.dataset.livePosition || null, source = null, retryIn = 1000, stopped = false, hideTimer = null;
  var retryTimer = null;
  var waiting = {}; // ids of new posts not shown yet
  var bar = null;

  function connect() {
    var address = root.dataset.live;
    if (lastID) address += (address.indexOf("?") < 0 ? "?" : "&") + "last=" + encodeURIComponent(lastID);
    source = new EventSource(address);
    source.onopen = function () { retryIn = 1000; };
    source.onmessage = function (event) {
      if (event.lastEventId) lastID = event.lastEventId;
      var data;
      try { data = JSON.parse(event.data); } catch (e) { return; }
      handle(data);
    };
    // Reconnects with its own backoff, carrying the last id seen: from about a second, doubling,
    // each wait between half and all of its step (so that pages cut off together do not all
    // come back at once), and never more than 15 s.
    source.onerror = function () {
      if (source) source.close();
      source = null;
      if (stopped) return;
      clearTimeout(retryTimer);
      retryTimer = setTimeout(function () { if (!stopped && !source) connect(); }, retryIn * (0.5 + Math.random() / 2));
      retryIn = Math.min(retryIn * 2, 15000);
    };
  }

  // A page hidden for ten minutes stops listening; shown again, it catches up (or offers a reload).
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) {
      hideTimer = setTimeout(function () {
        stopped = true;
        if (source) { source.close(); source = null; }
      }, 10 * 60 * 1000);
    } else {
      clearTimeout(hideTimer);
      // Shown again: no waiting out a backoff begun while hidden.
      if (!source) { stopped = false; clearTimeout(retryTimer); retryIn = 1000; connect(); }
    }
  });

  // A page left for another holds no connection while it is kept in the back-forward cache:
  // browsers allow six connections to a site over HTTP/1.1, and the streams of the pages kept
  // would take them all, stalling every next page of the site. Shown again, it catches up.
  window.addEventListener("pagehide", function () {
    stopped = true;
    if (source) { source.close(); source = null; }
  });
  window.addEventListener("pageshow", function (event) {
    if (event.persisted && stopped && !source) { stopped = false; connect(); }
  });

  function post(id) { return document.getElementById("post-" + id); }

  // Changes the page without moving what the reader is looking at: the first post on screen
  // stays where it was.
  function keepingPlace(change) {
    var anchor = null, top = 0;
    var articles = root.querySelectorAll("article.post");
    for (var i = 0; i < articles.length; i++) {
      var r = articles[i].getBoundingClientRect();
      if (r.bottom > 0) { anchor = articles[i]; top = r.top; break; }
    }
    change();
    if (anchor && anchor.isConnected) {
      var moved = anchor.getBoundingClientRect().top - top;
      if (moved !== 0) window.scrollBy(0, moved);
    }
  }

  function fetchPage(address) {
    return fetch(address, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (text) { return new DOMParser().parseFromString(text, "text/html"); });
  }

  function showBar(text, action) {
    if (!bar) {
      bar = document.createElement("button");
      bar.type = "button";
      bar.className = "live-bar";
      bar.setAttribute("aria-live", "polite");
      document.body.appendChild(bar);
    }
    bar.textContent = text;
    bar.onclick = action;
  }

  // New replies are said to screen readers, politely (new posts are, by the bar): "New reply
  // from Ann: …", the start of its text.
  var announcer = document.createElement("p");
  announcer.className = "visually-hidden";
  announcer.setAttribute("aria-live", "polite");
  announcer.dataset.liveAnnouncer = "";
  root.appendChild(announcer);
  function announceReply(node) {
    var name = node.querySelector(".author"), body = node.querySelector(".post-body");
    if (!root.dataset.liveReply || !name || !body) return;
    announcer.textContent = root.dataset.liveReply.replace("{name}", name.textContent.trim())
      .replace("{text}", body.textContent.trim().slice(0, 80));
  }

  function hideBar() {
    if (bar) { bar.remove(); bar = null; }
  }

  function countWaiting() { return Object.keys(waiting).length; }

  // In event mode (a severe warning in force: data-event-mode on the page) new posts are shown
  // as they come, once a burst has settled for a few seconds (each page at its own moment, so
  // that thousands watching do not all ask at once), where they belong, without moving the
  // reader; screen readers are told.
  var asTheyCome = onBoard && !olderPage && !!document.querySelector("[data-event-mode]");
  var asTheyComeTimer = null;

  function updateNewPostsBar() {
    var n = countWaiting();
    if (n === 0) { hideBar(); return; }
    if (asTheyCome) {
      if (!asTheyComeTimer) {
        asTheyComeTimer = setTimeout(function () { asTheyComeTimer = null; showNewPosts(true); }, 2000 + Math.random() * 3000);
      }
      return;
    }
    showBar(newPostsText(n), function () { showNewPosts(false); });
  }

  function newPostsText(n) {
    return n === 1 ? root.dataset.liveNewOne : root.dataset.liveNewMany.replace("{n}", n);
  }

  // The newest page as this reader sees it (their own flags and forms); the posts not on screen
  // yet go on top of the list, and the reader is taken there (unless they come on their own).
  function showNewPosts(onTheirOwn) {
    if (olderPage) { location.href = here; return; }
    fetchPage(here).then(function (doc) {
      var fresh = doc.querySelectorAll("section.board > article.post");
      var first = root.querySelector(":scope > article.post");
      var anchor = first || root.querySelector(".no-posts");
      for (var i = 0; i < fresh.length; i++) {
        var id = fresh[i].dataset.postId;
        if (post(id)) continue;
        var node = document.importNode(fresh[i], true);
        if (anchor) root.insertBefore(node, first || anchor); else root.appendChild(node);
      }
      var none = root.querySelector(".no-posts");
      if (none && root.querySelector("article.post")) none.remove();
      var shown = countWaiting();
      waiting = {};
      hideBar();
      if (onTheirOwn) {
        if (root.dataset.liveShown) announcer.textContent = shown === 1 ? root.dataset.liveShownOne : root.dataset.liveShown.replace("{n}", shown);
        return;
      }
      var top = root.querySelector(":scope > article.post");
      if (top) top.scrollIntoView({ block: "start" });
    }).catch(function () {
      // The bar stays (or, for posts that were to come on their own, appears): the reader can try again.
      if (onTheirOwn && countWaiting() > 0) showBar(newPostsText(countWaiting()), function () { showNewPosts(false); });
    });
  }

  // Where a post's new replies go on this page: under it on a board; on its own page, unless
  // its replies go on past a "later" pager (new ones belong on that later page).
  function holderFor(postID) {
    var holder = onBoard ? post(postID) : root.querySelector("#replies");
    if (!holder || (!onBoard && holder.querySelector("article.reply ~ p.pager"))) return null;
    return holder;
  }

  // Puts a reply under its post in the order they were written (fetches may land out of order).
  function placeReply(holder, node) {
    var id = Number(node.dataset.postId), shown = holder.querySelectorAll("article.reply"), later = null;
    for (var i = 0; i < shown.length; i++) {
      if (Number(shown[i].dataset.postId) > id) { later = shown[i]; break; }
    }
    if (later) later.before(node);
    else if (shown.length) shown[shown.length - 1].after(node);
    else if (onBoard) holder.appendChild(node);
    else holder.querySelector("h2").after(node);
  }

  // New replies under a post as this reader sees them (a fragment rendered once for everyone
  // with no part in them): from just before the earliest one asked for (`wanted`), else after
  // the last one shown; fetched once the burst of events has settled.
  var replyFetches = {}, replyWanted = {};
  function fetchReplies(postID, wanted) {
    if (wanted) replyWanted[postID] = Math.min(replyWanted[postID] || Infinity, wanted);
    if (replyFetches[postID]) return;
    replyFetches[postID] = setTimeout(function () {
      delete replyFetches[postID];
      var from = replyWanted[postID] || Infinity;
      delete replyWanted[postID];
      var holder = holderFor(postID);
      if (!holder) return;
      var shown = holder.querySelectorAll("article.reply"), after = null;
      for (var i = 0; i < shown.length; i++) {
        var id = Number(shown[i].dataset.postId);
        if (id < from) after = id;
      }
      fetchPage("/posts/" + postID + "/replies" + (after ? "?after=" + after : "")).then(function (doc) {
        var replies = doc.querySelectorAll("#replies article.reply");
        keepingPlace(function () {
          for (var i = 0; i < replies.length; i++) {
            if (post(replies[i].dataset.postId)) continue;
            var node = document.importNode(replies[i], true);
            announceReply(node);
            placeReply(holder, node);
          }
        });
      }).catch(function () {});
    }, 300 + Math.random() * 1200);
  }

  // Who this page is for, as a new reply's shared form needs it: a guest; a member who moderates
  // nothing; or anyone else (null), who asks for the replies as they see them.
  var me = document.querySelector("header a.me");
  var shareAs = document.querySelector(".admin-link") ? null
    : (me ? "member" : "guest");

  // A new reply as everyone with no part in it sees it: one fragment the server renders once
  // for all the pages that heard of it, whatever they hold. The reader's own (written in
  // another tab) comes with its own controls instead, as does anything the shared form does
  // not show.
  function fetchSharedReply(event) {
    setTimeout(function () {
      var holder = holderFor(event.post);
      if (!holder || post(event.id)) return;
      fetchPage("/shared/cities/" + event.city + "/replies/" + event.id + (shareAs === "member" ? "?as=member" : ""))
        .then(function (doc) {
          var reply = doc.querySelector("#replies article.reply");
          if (post(event.id)) return;
          var author = reply && reply.querySelector("a.author");
          if (!reply || (me && author && author.getAttribute("href") === me.getAttribute("href"))) {
            fetchReplies(event.post, event.id);
            return;
          }
          var node = document.importNode(reply, true);
          keepingPlace(function () {
            announceReply(node);
            placeReply(holder, node);
          });
        }).catch(function () {
          // Not there for a bystander (a hidden post's author still sees its replies), a node
          // without the shared form, trouble: the page's own form, from just before this reply.
          fetchReplies(event.post, event.id);
        });
    }, 300 + Math.random() * 1200);
  }

  // An edited post's text, from its own page.
  function fetchEdit(id) {
    fetchPage("/posts/" + id).then(function (doc) {
      var fresh = doc.getElementById("post-" + id), here = post(id);
      if (!fresh || !here) return;
      var body = fresh.querySelector(".post-body"), old = here.querySelector(".post-body");
      if (body && old) keepingPlace(function () { old.replaceWith(document.importNode(body, true)); });
    }).catch(function () {});
  }

  // The header's count, asked for when the stream says it changed (events carry no one's data).
  function updateUnread() {
    var link = document.querySelector(".notifications-link");
    if (!link) return;
    fetch("/notifications/unread", { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (answer) {
      var count = answer.unread | 0, live = link.querySelector(".unread-live");
      link.dataset.unread = count;
      live.textContent = "";
      if (count > 0) {
        var badge = document.createElement("span"), label = document.createElement("span");
        badge.className = "unread-count";
        badge.textContent = count;
        label.className = "visually-hidden";
        label.textContent = " " + link.dataset.unreadLabel;
        badge.appendChild(label);
        live.append(" ", badge);
      }
    }).catch(function () {});
  }

  function handle(event) {
    switch (event.type) {
      case "post":
        if (!onBoard || post(event.id)) return;
        waiting[event.id] = true;
        updateNewPostsBar();
        break;
      case "reply":
        if (!post(event.post) && onBoard) return;
        if (shareAs && event.city) fetchSharedReply(event);
        else fetchReplies(event.post);
        break;
      case "edit":
        if (post(event.id)) fetchEdit(event.id);
        break;
      case "gone":
        if (waiting[event.id]) { delete waiting[event.id]; updateNewPostsBar(); }
        var gone = post(event.id);
        if (gone) keepingPlace(function () { gone.remove(); });
        break;
      case "agree":
        var here = post(event.id);
        if (!here) return;
        var count = here.querySelector(":scope > .post-actions .reaction-count");
        if (count) { count.textContent = event.count; count.dataset.reactions = event.count; }
        break;
      case "reload":
        showBar(root.dataset.liveChanged, function () { location.reload(); });
        break;
      case "notice":
        updateUnread();
        break;
      case "surge":
        var slot = document.querySelector("[data-surge-slot]");
        if (!slot || !slot.dataset.surgeSlot) return;
        fetchPage(slot.dataset.surgeSlot).then(function (doc) {
          var fresh = doc.querySelector("[data-surge-slot]");
          if (fresh) slot.replaceWith(document.importNode(fresh, true));
        }).catch(function () {});
        break;
    }
  }

  connect();
})();
