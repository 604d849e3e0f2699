// "Use my location": asks the browser for its position and opens the nearest city.
// Without scripts the button stays hidden and search does the job.
(function () {
  var button = document.querySelector("button.locate");
  if (!button || !("geolocation" in navigator)) return;
  var status = document.querySelector(".locate-status");
  button.hidden = false;
  button.addEventListener("click", function () {
    status.textContent = button.dataset.locating;
    navigator.geolocation.getCurrentPosition(function (position) {
      var lat = position.coords.latitude.toFixed(4), lon = position.coords.longitude.toFixed(4);
      window.location.assign("/nearest?lat=" + encodeURIComponent(lat) + "&lon=" + encodeURIComponent(lon));
    }, function () {
      status.textContent = button.dataset.failed;
    }, { timeout: 10000, maximumAge: 600000 });
  });
})();
