// A version page whose checks are pending or running updates itself: it asks the version's API
// detail now and then and reloads once no check is left unfinished. Without JavaScript the page
// is complete and says to reload.
(function () {
  "use strict";

  var element = document.querySelector("[data-live-checks]");
  if (!element || !window.fetch) { return; }
  var url = element.getAttribute("data-live-checks");
  var delay = 2000;
  var MAX_DELAY = 15000;  // a slow test run is asked about every 15 s, not hammered
  var GIVE_UP_AFTER = 30 * 60 * 1000;  // a check stuck for half an hour: the sweep's job, not a tab's
  var started = Date.now();

  element.textContent = "Checks running: this page updates itself when they finish.";

  function unfinished(checks) {
    return Object.keys(checks || {}).some(function (name) {
      var status = checks[name].status;
      return status === "pending" || status === "running";
    });
  }

  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (detail) {
        if (detail && !unfinished(detail.checks)) {
          window.location.reload();
          return;
        }
        schedule();
      }, schedule);
  }

  function schedule() {
    if (Date.now() - started > GIVE_UP_AFTER) {
      element.textContent = "Checks still running: reload the page later to see their results.";
      return;
    }
    window.setTimeout(poll, delay);
    delay = Math.min(delay * 1.5, MAX_DELAY);
  }

  schedule();
})();
