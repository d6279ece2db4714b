// The driver page (docs/rules/ride.md#driver-page): with JavaScript the phone's position goes with each
// button press and, while the ride is on, to the service every 10 s. Without it the buttons still work.
(function () {
  "use strict";
  var box = document.getElementById("ride");
  if (!box || !navigator.geolocation) { return; }
  var rideOn = box.getAttribute("data-ride-on") === "1";
  var url = box.getAttribute("data-positions");
  var gps = document.getElementById("gps");
  var last = null;
  function say(text) { if (gps) { gps.textContent = text; } }
  function fill(fix) {
    last = fix;
    var inputs = document.querySelectorAll("input[name=lat], input[name=lng]");
    for (var i = 0; i < inputs.length; i++) {
      inputs[i].value = inputs[i].name === "lat" ? fix.coords.latitude : fix.coords.longitude;
    }
  }
  function send() {
    if (!last) { return; }
    var c = last.coords;
    var heading = (c.heading === null || isNaN(c.heading)) ? null : Math.round(c.heading) % 360;
    var speed = (c.speed === null || isNaN(c.speed)) ? null : Math.max(0, c.speed * 3.6);
    // No "at": the service stamps the position with its own clock (a phone's clock may be off).
    var body = {lat: c.latitude, lng: c.longitude, heading: heading, speed_kmh: speed};
    fetch(url, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
                credentials: "omit"})
      .then(function (r) {
        var now = new Date();
        var hhmm = ("0" + now.getHours()).slice(-2) + ":" + ("0" + now.getMinutes()).slice(-2);
        if (r.ok) { say("Position sent at " + hhmm + "."); return; }
        // The service's own reason ({"status": "Error", "message": ...}), not a bare status code.
        return r.json().then(function (body) {
          var why = body && typeof body.message === "string" ? body.message : "";
          say("Position not accepted at " + hhmm + ": " + (why || "the service refused it (" + r.status + ")") + ".");
        }, function () { say("Position not accepted at " + hhmm + " (the service answered " + r.status + ")."); });
      })
      .catch(function () { say("No connection: your position will be sent when it is back."); });
  }
  navigator.geolocation.watchPosition(
    function (fix) { var first = last === null; fill(fix); if (rideOn && first) { send(); } },
    function () { say("Location is off: the buttons still work, your position is not sent."); },
    {enableHighAccuracy: true, maximumAge: 10000, timeout: 20000}
  );
  if (rideOn) { setInterval(send, 10000); }
}());
