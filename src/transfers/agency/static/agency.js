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
})();
