// Progressive enhancement only: without this file the "Preview prices" button does the same.
// The rate card editor: the preview refreshes as the card or the trip fields change.
(function () {
  var form = document.getElementById("card-form");
  var target = document.getElementById("preview");
  if (!form || !target || !window.fetch) { return; }
  var timer = null;
  function refresh() {
    var data = new URLSearchParams(new FormData(form));
    if (!data.get("lat") || !data.get("lng")) { return; }
    fetch("/partner/rate-card/preview?fragment=preview", {method: "POST", body: data, credentials: "same-origin"})
      .then(function (answer) { return answer.text(); })
      .then(function (html) {
        var holder = document.createElement("div");
        holder.innerHTML = html;
        var fresh = holder.querySelector("#preview");
        if (fresh) { target.replaceWith(fresh); target = fresh; }
      });
  }
  form.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(refresh, 400); });
})();
