// Progressive enhancement only: every action works without this file.
// [data-copy="ID"] buttons copy the text of element #ID (secrets shown once).
document.addEventListener("click", function (event) {
  var button = event.target.closest("[data-copy]");
  if (!button || !navigator.clipboard) { return; }
  var source = document.getElementById(button.getAttribute("data-copy"));
  if (source) { navigator.clipboard.writeText(source.textContent.trim()); button.textContent = "Copied"; }
});
