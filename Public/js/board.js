// The board's small helps; without scripts everything still works (the server checks the limit
// and gives the text back when it is over, and a report menu closes by its summary).
(function () {
  // A live count under boxes with a limit: "12 / 500", counted as the server counts (code points:
  // an emoji is one, where `maxlength` and `value.length` count two UTF-16 units and stopped
  // emoji posts well short of the limit).
  document.querySelectorAll("textarea[data-limit][data-count]").forEach(function (box) {
    var out = document.getElementById(box.dataset.count);
    if (!out) return;
    var update = function () {
      var used = Array.from(box.value).length;
      out.textContent = used + " / " + box.dataset.limit;
      out.classList.toggle("over", used > Number(box.dataset.limit));
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
  // Esc closes an open report menu and puts the focus back on its summary.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    document.querySelectorAll("details.report-menu[open]").forEach(function (menu) {
      menu.open = false;
      var summary = menu.querySelector("summary");
      if (summary) summary.focus();
    });
  });
})();
