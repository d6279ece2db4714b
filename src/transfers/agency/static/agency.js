// Progressive enhancement only: without this file every page does the same by a page load.
(function () {
  // "Copy" beside a tracking link: puts the link on the clipboard.
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (!source || !navigator.clipboard) { return; }
      navigator.clipboard.writeText(source.value || source.textContent).then(function () {
        button.textContent = "Copied";
      });
    });
  });

  // Book: the destination offers matching places as it is typed (GET /agency/book/places, the
  // geocoder near the airport); choosing one fills the coordinates, so the search uses exactly it.
  var form = document.getElementById("book-form");
  var place = document.getElementById("place");
  var list = document.getElementById("place-suggestions");
  var lat = document.getElementById("lat");
  var lng = document.getElementById("lng");
  var airport = document.getElementById("airport");
  if (!form || !place || !list || !lat || !lng || !window.fetch) { return; }
  var lookup = null;
  var asked = 0;

  function choose(item) {
    place.value = item.label;
    lat.value = String(item.lat);
    lng.value = String(item.lng);
    lat.dataset.fromPlace = "1";
    list.hidden = true;
    list.innerHTML = "";
  }

  function suggest() {
    var query = place.value.trim();
    if (query.length < 2) { list.hidden = true; return; }
    var mine = ++asked;
    var url = "/agency/book/places?q=" + encodeURIComponent(query) + "&airport=" + encodeURIComponent(airport ? airport.value : "");
    fetch(url, {credentials: "same-origin"})
      .then(function (answer) { return answer.json(); })
      .then(function (found) {
        if (mine !== asked) { return; }  // a later keystroke's answer wins
        list.innerHTML = "";
        (found.places || []).forEach(function (item) {
          var li = document.createElement("li");
          var button = document.createElement("button");
          button.type = "button";
          button.className = "link";
          button.textContent = item.label;
          button.addEventListener("click", function () { choose(item); });
          li.appendChild(button);
          list.appendChild(li);
        });
        if (found.problem) {
          var note = document.createElement("li");
          note.className = "hint";
          note.textContent = found.problem + " Type the coordinates instead.";
          list.appendChild(note);
        }
        list.hidden = !list.children.length;
      })
      .catch(function () { list.hidden = true; });
  }

  place.addEventListener("input", function () {
    if (lat.dataset.fromPlace) { lat.value = ""; lng.value = ""; delete lat.dataset.fromPlace; }
    clearTimeout(lookup);
    lookup = setTimeout(suggest, 250);
  });
  place.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { list.hidden = true; }
  });
})();
