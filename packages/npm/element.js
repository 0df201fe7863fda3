// <service-bus-playground>: the Service Bus Playground in a frame next to documentation text.
//
// The element builds an iframe to the playground's site (the `site/` folder of this package,
// or wherever the `site` attribute says) with a query made from its attributes, and sizes the
// frame to the height the playground reports (`sbp-size` messages, as web/embed.js does for a
// plain iframe). It has no dependencies and touches nothing outside itself: the frame lives in
// the element's shadow root, so a framework that renders the element (React, Vue) never sees a
// child it did not make, and the page's CSS for `iframe` does not reach it.
//
// Attributes (every value goes into the frame's address URL-encoded, never into markup):
//   preset    a preset's name                       -> ?preset=
//   lesson    a lesson's id                         -> ?lesson=
//   scenario  a share link, or only its #fragment  -> #fragment (the scenario, instant, speed)
//   instant   where the clock starts ("90s", "2m"; a preset or scenario) -> ?at=
//   speed     the clock's speed: 1, 10, 60, 100, 1000, 10000, 100000     -> ?speed=
//   autoplay  play at once                          -> ?autoplay=1
//   loop      start again once nothing more is due  -> ?loop=1
//   panels    which panels: map, lanes, log, controls (comma-separated) -> ?panels=
//   lang      en, de, nl or sv                      -> ?lang=
//   height    the frame's height in px until the playground reports its own (default 480)
//   site      where the playground's site is: its folder or its index.html (also `src`)
//   label     the frame's title for assistive technology (default "Service Bus Playground")
//   loading   the frame's loading: "lazy" (default) or "eager"
// A flag (autoplay, loop) is on when present, unless its value is "false", "0", "off" or "no"
// (React 18 writes `autoplay={false}` as autoplay="false").

const TAG = 'service-bus-playground';
// The bounds web/embed.js keeps: a report outside them is ignored.
const MIN_HEIGHT = 100;
const MAX_HEIGHT = 10000;
const DEFAULT_HEIGHT = 480;
// Attribute -> query parameter, passed on as the value is.
const QUERY = [
  ['preset', 'preset'],
  ['lesson', 'lesson'],
  ['panels', 'panels'],
  ['lang', 'lang'],
  ['instant', 'at'],
  ['speed', 'speed'],
];
const FLAGS = ['autoplay', 'loop'];
const OBSERVED = [...QUERY.map(([a]) => a), ...FLAGS, 'scenario', 'height', 'site', 'src', 'label', 'loading'];
// The site beside this file. Not written as `new URL('./site/index.html', import.meta.url)`:
// webpack turns that pattern into a hashed copy of index.html alone, without the wasm and
// scripts it loads, and warns of "an expression" when a variable stands in the literal's place.
// Read into a constant, import.meta.url is this file's address in a browser; webpack writes the
// file's `file:` path there instead, which sitePage() refuses (the element then asks for
// `site`).
const SITE_BESIDE = './site/index.html';
const MODULE_URL = import.meta.url;

const STYLE = ':host{display:block}:host([hidden]){display:none}'
  + 'iframe{display:block;width:100%;max-width:100%;border:0}'
  + 'p{margin:0;padding:8px;border:1px dashed #c33;color:#c33;font:14px/1.4 system-ui,sans-serif}';

function flag(value) {
  return value !== null && !['false', '0', 'off', 'no'].includes(value.trim().toLowerCase());
}

function initialHeight(value) {
  const h = Number.parseInt(value ?? '', 10);
  return Number.isFinite(h) ? Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, h)) : DEFAULT_HEIGHT;
}

// The site's page: the `site` (or `src`) attribute, relative to the page; else the site beside
// this module. A folder (ending in /) means its index.html. Null when there is none that a
// browser could load: under a bundler that rewrites import.meta.url to a file: URL.
function sitePage(element) {
  const given = (element.getAttribute('site') ?? element.getAttribute('src') ?? '').trim();
  let url;
  try {
    url = given ? new URL(given, document.baseURI) : new URL(SITE_BESIDE, MODULE_URL);
  } catch {
    return null;
  }
  if (!['http:', 'https:'].includes(url.protocol) && url.protocol !== location.protocol) return null;
  if (url.pathname.endsWith('/')) url.pathname += 'index.html';
  url.hash = '';
  return url;
}

// The frame's address for `element`'s attributes, or null (no site to load).
function frameSrc(element) {
  const url = sitePage(element);
  if (!url) return null;
  const query = url.searchParams;
  query.set('embed', '1');
  for (const [attribute, parameter] of QUERY) {
    const value = element.getAttribute(attribute);
    if (value !== null && value.trim() !== '') query.set(parameter, value.trim());
  }
  for (const name of FLAGS) {
    if (flag(element.getAttribute(name))) query.set(name, '1');
  }
  // A share link's fragment holds the scenario (s=), its instant (t=), speed (x=) and state
  // (c=); a lesson link's holds the lesson (lesson=). Only the fragment is taken, so the link
  // may come from any host. The URL API percent-encodes what a fragment may not hold.
  const scenario = (element.getAttribute('scenario') ?? '').trim();
  const hash = scenario.includes('#') ? scenario.slice(scenario.indexOf('#') + 1) : scenario;
  if (hash) url.hash = hash;
  return url.href;
}

function defineElement() {
  class ServiceBusPlayground extends HTMLElement {
    static get observedAttributes() {
      return OBSERVED;
    }

    #root;
    #frame = null;
    #pending = false;
    // Bound once, so that the same function is removed on disconnect.
    #onMessage = (e) => this.#resize(e);

    constructor() {
      super();
      this.#root = this.attachShadow({ mode: 'open' });
      const style = document.createElement('style');
      style.textContent = STYLE;
      this.#root.append(style);
    }

    connectedCallback() {
      window.addEventListener('message', this.#onMessage);
      this.#render();
    }

    disconnectedCallback() {
      window.removeEventListener('message', this.#onMessage);
      // The browser unloads a removed frame anyway; dropping it frees the playground now, and a
      // reconnected element builds a fresh one.
      this.#frame?.remove();
      this.#frame = null;
      this.#root.querySelector('p')?.remove();
    }

    attributeChangedCallback(name, before, after) {
      if (before === after || !this.isConnected) return;
      // Several attributes set one after another (a framework's update) make one new frame.
      if (this.#pending) return;
      this.#pending = true;
      queueMicrotask(() => {
        this.#pending = false;
        if (this.isConnected) this.#render();
      });
    }

    #render() {
      const src = frameSrc(this);
      const height = initialHeight(this.getAttribute('height'));
      const title = this.getAttribute('label') || 'Service Bus Playground';
      const loading = this.getAttribute('loading') === 'eager' ? 'eager' : 'lazy';
      this.#root.querySelector('p')?.remove();
      if (src === null) {
        this.#frame?.remove();
        this.#frame = null;
        const note = document.createElement('p');
        note.textContent = `<${TAG}>: set its site attribute to the address of the playground's site (its index.html or folder).`;
        this.#root.append(note);
        return;
      }
      const frame = this.#frame;
      if (frame && frame.src === src) {
        frame.title = title;
        if (!frame.dataset.reported) frame.style.height = `${height}px`;
        return;
      }
      // A new address gets a new frame, not a new src: changing a loaded frame's src adds an
      // entry to the page's history (Back would step through the frame), and a change of the
      // fragment alone would not reload the playground, which reads its link once at start.
      const next = document.createElement('iframe');
      next.setAttribute('part', 'frame');
      next.title = title;
      next.loading = loading;
      next.style.height = `${height}px`;
      next.src = src;
      if (frame) frame.replaceWith(next);
      else this.#root.append(next);
      this.#frame = next;
    }

    // A size report counts only from this element's own frame (its window), only from the
    // origin of the frame's address, and only with a finite height within bounds: another
    // frame or window on the page cannot resize this one, nor the playground beyond the bounds.
    #resize(e) {
      const frame = this.#frame;
      if (!frame || e.source === null || e.source !== frame.contentWindow) return;
      const data = e.data;
      if (!data || typeof data !== 'object' || data.type !== 'sbp-size') return;
      const height = data.height;
      if (typeof height !== 'number' || !Number.isFinite(height)) return;
      if (height < MIN_HEIGHT || height > MAX_HEIGHT) return;
      let origin;
      try {
        origin = new URL(frame.src).origin;
      } catch {
        return;
      }
      if (origin !== e.origin) return;
      frame.dataset.reported = '1';
      frame.style.height = `${Math.round(height)}px`;
    }
  }
  customElements.define(TAG, ServiceBusPlayground);
}

// Defined once, however often this file is loaded (twice from two addresses is two modules);
// and not at all where there is no DOM (a server rendering the page imports it too).
if (typeof window !== 'undefined' && window.customElements && typeof HTMLElement === 'function'
  && !window.customElements.get(TAG)) {
  defineElement();
}
