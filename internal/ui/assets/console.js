// landlord console: live updates of the tenants a page shows, from the
// server-sent events of /ui/live. The pages work without it; it only keeps
// them current without reloading.
'use strict';

(function () {
  const state = document.getElementById('live-state');
  const announcer = document.getElementById('announcer');

  function setState(cls, text) {
    if (state) {
      state.className = 'live-state ' + cls;
      state.textContent = text;
    }
  }

  const live = document.querySelector('[data-live]');
  if (!live || !('EventSource' in window)) {
    return;
  }
  const source = new EventSource(live.getAttribute('data-live'));
  source.addEventListener('open', function () {
    setState('on', 'Live');
  });
  source.addEventListener('error', function () {
    setState('off', 'Reconnecting…');
  });
  source.addEventListener('tenant', function (e) {
    const update = JSON.parse(e.data);
    Object.keys(update.fragments).forEach(function (id) {
      const el = document.getElementById(id);
      if (el) {
        el.outerHTML = update.fragments[id];
      }
    });
    if (announcer) {
      announcer.textContent = update.name + ' is ' + update.status;
    }
  });
  source.addEventListener('signedout', function () {
    source.close();
    window.location.reload();
  });
})();
