/**
 * The console's only script, served as a static file (`/console/assets/fleet-live.js`, allowed by the CSP's
 * `script-src 'self'`; docs/console.md, "Live updates"). The Fleet page works without it (reload to update);
 * with it, the page opens the session's stream of the fleet with the page's own filters and puts each update
 * in place, keeping the keyboard's focus. Every update is HTML the server rendered and escaped (pages/fleet.ts
 * `fleetResults`): the script renders nothing itself. When the stream ends (the session ended, the server
 * stopped) it says so and stops.
 */
export const FLEET_LIVE_JS = `'use strict';
(function () {
  var results = document.getElementById('fleet-results');
  var note = document.getElementById('fleet-live');
  if (!results || !note || typeof EventSource !== 'function') return;
  var source = new EventSource('/console/fleet/stream' + window.location.search);
  source.addEventListener('open', function () {
    note.textContent = 'Live: this list updates by itself.';
  });
  var last = null;
  source.addEventListener('fleet', function (e) {
    var html = JSON.parse(e.data).html;
    if (html === last) return;
    last = html;
    // Replacing the list must not take the keyboard's place away: a link or control that had the focus
    // gets it back in the new list (found by its href or name), so an update never swallows an Enter.
    var focused = document.activeElement;
    var key = null;
    if (focused && results.contains(focused)) {
      key = focused.getAttribute('href') ? ['href', focused.getAttribute('href')] :
        focused.getAttribute('name') ? ['name', focused.getAttribute('name')] : null;
    }
    results.innerHTML = html;
    if (key) {
      var all = results.querySelectorAll('[' + key[0] + ']');
      for (var i = 0; i < all.length; i++) {
        if (all[i].getAttribute(key[0]) === key[1]) { all[i].focus(); break; }
      }
    }
  });
  source.addEventListener('end', function (e) {
    source.close();
    note.textContent = JSON.parse(e.data).why + ' Reload the page.';
  });
  source.addEventListener('error', function () {
    if (source.readyState === EventSource.CLOSED) note.textContent = 'Live updates stopped. Reload the page.';
  });
})();
`;
