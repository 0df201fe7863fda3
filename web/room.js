// A workshop's room, as a learner's page takes part in it (`?room=ID`, the link the trainer's
// page gives; `sbp serve` keeps the room: crates/server/src/rooms). Loaded by index.html only
// when the page has a room, so the playground's wasm carries none of it.
//
// The learner joins with a name they choose. From then on the page tells the room where the
// learner is in the lessons: the app says it (the `sbp-lesson-at` event: lesson, part, of,
// reached, hints, answer) and this passes it on. Nothing else leaves the page: no scenario, no
// step. The room tells the page where the trainer moved everyone (the page opens that lesson)
// and the spread of the room's answers to each prediction the trainer revealed.
//
// Every text from the room (names, answers, errors) lands through textContent.
(function () {
  'use strict';
  const id = new URLSearchParams(location.search).get('room') || '';
  if (!/^[0-9a-f]{1,32}$/.test(id)) return;
  // The room's box, under the page's header (first on a phone's screen); the app renders the
  // body, so the box goes back there whenever a render took it out.
  const box = Object.assign(document.createElement('section'), { id: 'room', className: 'room' });
  const place = () => {
    const header = document.querySelector('body > header.top');
    if (header && header.nextElementSibling !== box) header.after(box);
  };
  new MutationObserver(place).observe(document.body, { childList: true });
  const stored = (what) => { try { return localStorage.getItem(`sbp.room.${id}.${what}`); } catch (e) { return null; } };
  const store = (what, value) => { try { if (value === null) localStorage.removeItem(`sbp.room.${id}.${what}`); else localStorage.setItem(`sbp.room.${id}.${what}`, value); } catch (e) { /* private mode: the room lasts as long as the page */ } };

  // The words, from the catalog the page uses (the Fluent subset: `key = text { $var }`).
  let words = {};
  const t = (key, vars) => (words[key] || key).replace(/\{ \$([a-z]+) \}/g, (_, v) => (vars && v in vars ? String(vars[v]) : ''));
  const loadWords = () => fetch(`i18n/${document.documentElement.lang || 'en'}.ftl`)
    .then((r) => (r.ok ? r.text() : ''))
    .then((text) => {
      words = {};
      for (const m of text.matchAll(/^(room-[a-z-]+|live-gone) = (.*)$/gm)) words[m[1]] = m[2];
      draw();
    }, () => draw());

  let said = null;          // what the room said last (a refusal, the room closed)
  let revealed = [];        // the spreads the trainer revealed
  let at = null;            // where the learner is (the app's last word)
  let feed = null;
  let unloading = false;    // the page goes (a move opens a lesson): its feed's end says nothing
  window.addEventListener('pagehide', () => { unloading = true; });

  const why = (r) => r.text().then((body) => {
    try { return JSON.parse(body).error || t('live-gone'); } catch (e) { return t('live-gone'); }
  }, () => t('live-gone'));
  const post = (url, body) => fetch(url, { method: 'POST', headers: { 'x-sbp-live': '1' }, body: JSON.stringify(body) });
  const el = (tag, props, ...children) => {
    const e = Object.assign(document.createElement(tag), props || {});
    e.append(...children.filter((c) => c !== null));
    return e;
  };
  const show = (...children) => box.replaceChildren(...children.filter((c) => c !== null));

  function leave(message) {
    store('key', null);
    store('name', null);
    if (feed) { feed.close(); feed = null; }
    said = message;
    draw();
  }

  function draw() {
    place();
    box.setAttribute('aria-label', t('room-title'));
    const name = stored('name');
    if (!stored('key') || !name) {
      // A redraw (the app's next lesson place, another language) keeps what is being typed.
      const before = box.querySelector('#room-name');
      const typing = before !== null && document.activeElement === before;
      const input = el('input', { id: 'room-name', maxLength: 40, required: true, autocomplete: 'nickname', value: before ? before.value : '' });
      const form = el('form', { className: 'room-join' },
        el('label', { htmlFor: 'room-name', textContent: t('room-name') }), input,
        el('button', { id: 'room-join', className: 'primary', textContent: t('room-join') }));
      form.addEventListener('submit', (e) => {
        e.preventDefault();
        post(`rooms/${id}/join`, { name: input.value }).then((r) => (r.ok ? r.json().then((joined) => {
          store('key', joined.key);
          store('name', joined.name);
          said = null;
          follow();
          draw();
          tell();
        }) : why(r).then((w) => { said = t('room-refused', { why: w }); draw(); })), () => { said = t('room-refused', { why: t('live-gone') }); draw(); });
      });
      show(el('h2', { textContent: t('room-title') }),
        said ? el('p', { className: 'error', id: 'room-said', role: 'alert', textContent: said }) : null,
        form, el('p', { className: 'hint', id: 'room-shared', textContent: t('room-shared') }));
      if (typing) input.focus();
      return;
    }
    const lesson = at && at.lesson;
    const list = el('ul', { id: 'room-revealed' });
    for (const spread of revealed.filter((s) => s.lesson === lesson)) {
      list.append(el('li', {}, t('room-spread', { part: spread.part + 1 }), ' ',
        ...spread.answers.map(([answer, n]) => el('span', { className: 'room-answer', textContent: `${answer}: ${n}` }))));
    }
    show(el('p', { id: 'room-in' }, el('strong', { textContent: t('room-in', { name }) })),
      said ? el('p', { className: 'error', id: 'room-said', role: 'alert', textContent: said }) : null, list);
  }

  // The room's feed: where the trainer moved everyone, and what they revealed.
  function follow() {
    const key = stored('key');
    if (!key || feed) return;
    feed = new EventSource(`rooms/${id}/learner?key=${encodeURIComponent(key)}`);
    feed.addEventListener('room', (e) => {
      const room = JSON.parse(e.data);
      revealed = room.revealed || [];
      const followed = Number(stored('moves') || 0);
      if (room.lesson && room.moves > followed) {
        store('moves', String(room.moves));
        if (!at || at.lesson !== room.lesson) {
          // The lesson opens as `?lesson=` opens it (the page's own link or scenario gives way).
          const q = new URLSearchParams(location.search);
          q.set('lesson', room.lesson);
          for (const k of ['lessons', 'preset', 'at', 'speed']) q.delete(k);
          unloading = true;
          location.assign(`${location.pathname}?${q}`);
          return;
        }
      }
      draw();
    });
    feed.addEventListener('closed', () => leave(t('room-closed')));
    // A room the server no longer has (it restarted): the feed is refused, and not retried.
    feed.onerror = () => { if (!unloading && feed && feed.readyState === EventSource.CLOSED) leave(t('room-closed')); };
  }

  // Where the learner is, told to the room.
  function tell() {
    const key = stored('key');
    if (!key || !at) return;
    post(`rooms/${id}/report?key=${encodeURIComponent(key)}`, at).then((r) => {
      if (r.status === 403 || r.status === 404) why(r).then((w) => leave(t('room-refused', { why: w })));
    }, () => {});
  }

  window.addEventListener('sbp-lesson-at', (e) => { at = JSON.parse(e.detail); tell(); draw(); });
  if (window.sbpLessonAt) at = JSON.parse(window.sbpLessonAt);
  new MutationObserver(loadWords).observe(document.documentElement, { attributes: true, attributeFilter: ['lang'] });
  loadWords();
  follow();
  tell();
})();
