// landlord console: live updates of the tenants or the rollout a page
// shows, from the server-sent events of /ui/live. The pages work without
// it; it only keeps them current without reloading.
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
  function replace(fragments) {
    Object.keys(fragments).forEach(function (id) {
      const el = document.getElementById(id);
      if (el) {
        el.outerHTML = fragments[id];
      }
    });
  }
  source.addEventListener('tenant', function (e) {
    const update = JSON.parse(e.data);
    replace(update.fragments);
    if (announcer) {
      announcer.textContent = update.name + ' is ' + update.status;
    }
  });
  // A rollout's parts change at every step of it: only a change of its
  // state is announced.
  let rolloutState = null;
  source.addEventListener('rollout', function (e) {
    const update = JSON.parse(e.data);
    replace(update.fragments);
    if (announcer && rolloutState !== null && update.status !== rolloutState) {
      announcer.textContent = update.name + ' is ' + update.status;
    }
    rolloutState = update.status;
  });
  // The rollout has finished: nothing more will change.
  source.addEventListener('finished', function () {
    source.close();
    setState('done', 'Finished');
  });
  source.addEventListener('signedout', function () {
    source.close();
    window.location.reload();
  });
})();
