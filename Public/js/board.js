// The board's small helps; without scripts everything still works (the limit is the box's own
// maxlength and the server's check, and a report menu closes by its summary).
(function () {
  // A live count under boxes with a limit: "12 / 500".
  document.querySelectorAll("textarea[maxlength][data-count]").forEach(function (box) {
    var out = document.getElementById(box.dataset.count);
    if (!out) return;
    var update = function () { out.textContent = box.value.length + " / " + box.maxLength; };
    box.addEventListener("input", update);
    update();
  });
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
