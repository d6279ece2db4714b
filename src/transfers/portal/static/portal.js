// Progressive enhancement only: without this file every button does the same by a page load.
// The rate card form: the place field offers matches as it is typed (from the geocoder), and the
// price preview refreshes as the card or the trip fields change.
(function () {
  var form = document.getElementById("card-form");
  var target = document.getElementById("preview");
  if (!form || !target || !window.fetch) { return; }
  var place = document.getElementById("place");
  var lat = document.getElementById("lat");
  var lng = document.getElementById("lng");
  var airport = document.getElementById("airport");
  var list = document.getElementById("place-suggestions");
  var timer = null;
  var lookup = null;

  function refresh() {
    var data = new URLSearchParams(new FormData(form));
    if (!(data.get("lat") && data.get("lng")) && !data.get("place")) { return; }
    data.set("picked_for", data.get("place") || "");
    fetch("/partner/rate-card/preview?fragment=preview", {method: "POST", body: data, credentials: "same-origin"})
      .then(function (answer) { return answer.text(); })
      .then(function (html) {
        var holder = document.createElement("div");
        holder.innerHTML = html;
        var fresh = holder.querySelector("#preview");
        if (fresh) { target.replaceWith(fresh); target = fresh; }
      });
  }

  function choose(item) {
    place.value = item.label;
    lat.value = String(item.lat);
    lng.value = String(item.lng);
    lat.dataset.fromPlace = "1";
    list.hidden = true;
    list.innerHTML = "";
    refresh();
  }

  function suggest() {
    var query = place.value.trim();
    if (query.length < 2) { list.hidden = true; return; }
    var url = "/partner/rate-card/places?q=" + encodeURIComponent(query) + "&airport=" + encodeURIComponent(airport ? airport.value : "");
    fetch(url, {credentials: "same-origin"})
      .then(function (answer) { return answer.json(); })
      .then(function (found) {
        list.innerHTML = "";
        (found.places || []).forEach(function (item) {
          var li = document.createElement("li");
          var button = document.createElement("button");
          button.type = "button";
          button.textContent = item.label;
          button.addEventListener("click", function () { choose(item); });
          li.appendChild(button);
          list.appendChild(li);
        });
        if (found.problem) {
          var note = document.createElement("li");
          note.className = "hint";
          note.textContent = found.problem + " Enter the coordinates instead.";
          list.appendChild(note);
        }
        list.hidden = !list.children.length;
      });
  }

  if (place && list) {
    place.addEventListener("input", function (event) {
      event.stopPropagation();
      if (lat.dataset.fromPlace) { lat.value = ""; lng.value = ""; delete lat.dataset.fromPlace; }
      clearTimeout(lookup);
      lookup = setTimeout(suggest, 250);
    });
    place.addEventListener("keydown", function (event) {
      if (event.key === "Escape") { list.hidden = true; }
    });
  }
  // Enter in a trip field previews (without this script it saves, the form's default button).
  var tripFields = document.getElementById("preview-fields");
  if (tripFields) {
    tripFields.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && event.target.tagName === "INPUT") { event.preventDefault(); if (list) { list.hidden = true; } refresh(); }
    });
  }
  form.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(refresh, 400); });
})();
