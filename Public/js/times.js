// A post's time comes written in its city's time ("27 Nov 14:05"), the same for every reader at
// every minute, so that a kept board stays true. Here it reads relative to the reader's clock,
// in the page's words ("5 min ago", given on this script's element), and keeps up while the page
// is open; posts that live.js puts in are worded as they arrive. The moment shows on hover.
// Beside one's own post, "until 15:00" counts down ("12 min left"); past its end the server's
// words come back.
(function () {
  var phrases = document.currentScript ? document.currentScript.dataset : {};
  var ago = function (seconds) {
    var phrase = seconds < 60 ? phrases.now : seconds < 3600 ? phrases.minutes : seconds < 86400 ? phrases.hours : phrases.days;
    var n = Math.floor(seconds / (seconds < 3600 ? 60 : seconds < 86400 ? 3600 : 86400));
    return phrase && phrase.replace("{n}", n);
  };
  var wordTime = function (time) {
    var moment = new Date(time.getAttribute("datetime"));
    if (isNaN(moment)) return;
    if (!time.title) time.title = moment.toLocaleString(document.documentElement.lang || undefined);
    if (!time.hasAttribute("data-ago")) return;
    var text = ago(Math.max(0, (Date.now() - moment.getTime()) / 1000));
    if (text && time.textContent !== text) time.textContent = text;
  };
  var countDown = function (left) {
    if (!("until" in left.dataset)) left.dataset.until = left.textContent;
    var minutes = Math.ceil((new Date(left.dataset.editEnds).getTime() - Date.now()) / 60000);
    var text = phrases.editLeft && minutes >= 1 && minutes <= 15 ? " · " + phrases.editLeft.replace("{n}", minutes) : left.dataset.until;
    if (left.textContent !== text) left.textContent = text;
  };
  var word = function (root) {
    var each = function (selector, action) {
      if (root.matches && root.matches(selector)) action(root);
      root.querySelectorAll(selector).forEach(action);
    };
    each("time[datetime]", wordTime);
    each("[data-edit-ends]", countDown);
  };
  word(document);
  // Shorter than a minute, so that counts step close to the minute.
  setInterval(function () { word(document); }, 20000);
  new MutationObserver(function (changes) {
    changes.forEach(function (change) {
      change.addedNodes.forEach(function (node) { if (node.querySelectorAll) word(node); });
    });
  }).observe(document.body, { childList: true, subtree: true });
})();
