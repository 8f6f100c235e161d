// The report's only script: filtering the trial list of a transcript page. It reads the DOM, never data
// embedded in a script. ?q=TEXT and ?failed=1 pre-set the filter (links can point at a selection).
// Once the page has loaded, <body> says so (data-ready) and how many images failed to load (data-broken-images).
(function () {
  "use strict";
  var list = document.getElementById("trial-list");
  var filter = document.getElementById("filter");
  var failedOnly = document.getElementById("failed-only");
  var counter = document.getElementById("shown-count");

  function apply() {
    var query = filter.value.trim().toLowerCase();
    var shown = 0;
    Array.prototype.forEach.call(list.querySelectorAll("li"), function (item) {
      var text = (item.getAttribute("data-text") || "").toLowerCase();
      var failed = item.getAttribute("data-verdict") !== "pass";
      var visible = (!query || text.indexOf(query) !== -1) && (!failedOnly.checked || failed);
      item.hidden = !visible;
      if (visible) { shown += 1; }
    });
    counter.textContent = String(shown);
  }

  if (list && filter && failedOnly && counter) {
    var params = new URLSearchParams(window.location.search);
    filter.value = params.get("q") || "";
    failedOnly.checked = params.get("failed") === "1";
    filter.addEventListener("input", apply);
    failedOnly.addEventListener("change", apply);
    apply();
  }
  window.addEventListener("load", function () {
    var broken = Array.prototype.filter.call(document.images, function (img) {
      return !img.complete || img.naturalWidth === 0;
    });
    document.body.setAttribute("data-broken-images", String(broken.length));
    document.body.setAttribute("data-ready", "1");
  });
}());
