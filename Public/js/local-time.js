// Instants the server can only write in UTC (it does not know the reader's zone), rewritten in
// the reader's own zone and the page's language: "29 Nov 2026, 14:45 GMT+9". The UTC text stays
// as the element's title; without scripts it is what the reader sees.
(function () {
  // The same conventions as the server's dates (DateFormatting): British English, 24-hour clock.
  var lang = document.documentElement.lang;
  var format = new Intl.DateTimeFormat({ en: "en-GB", ko: "ko-KR" }[lang] || lang || undefined, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
    hourCycle: "h23", timeZoneName: "short"
  });
  document.querySelectorAll("time[data-local-time]").forEach(function (element) {
    var instant = new Date(element.getAttribute("datetime"));
    if (isNaN(instant.getTime())) return;
    element.title = element.textContent;
    element.textContent = format.format(instant);
  });
})();
