//! Glue to the browser: the URL (share links, embed mode), local storage, the clipboard, time.
use sbp_scenario::link::{decode_link, link_at, link_fragment};
use sbp_scenario::Simulation;

/// Where the current scenario is kept (a link fragment).
const STORAGE_KEY: &str = "sbp.scenario.link.v1";

/// The starter's name, written once for [`STARTER_NAME`] and [`STARTER`].
macro_rules! starter_name {
    () => {
        "Playground"
    };
}
/// The starter's name (the preset menu shows it as "playground").
pub const STARTER_NAME: &str = starter_name!();
/// The scenario a new visitor starts with: one queue that dead-letters expired messages.
/// (What it is for is said by the first screen, in the reader's language.)
pub const STARTER: &str = concat!(
    r#"{"version":1,"name":""#,
    starter_name!(),
    r#"","entities":[{"queue":"orders","dead_lettering_on_message_expiration":true,"max_delivery_count":3,"lock_duration":"30s"}]}"#
);

pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// The page's local storage (none in a private window that refuses it).
pub fn storage() -> Option<web_sys::Storage> {
    web_sys::window().and_then(|w| w.local_storage().ok().flatten())
}

/// Whether the page's query says `name=1` (or `true`).
pub fn query_flag(name: &str) -> bool {
    query_value(name).is_some_and(|v| v == "1" || v == "true")
}

thread_local! {
    /// The page's query, read once (the start asks it a dozen times); `replace_url` forgets it.
    static QUERY: std::cell::RefCell<Option<web_sys::UrlSearchParams>> = const { std::cell::RefCell::new(None) };
}

/// The value of `name` in the page's query, if given.
pub fn query_value(name: &str) -> Option<String> {
    QUERY.with(|query| {
        let mut query = query.borrow_mut();
        if query.is_none() {
            let search = web_sys::window()
                .and_then(|w| w.location().search().ok())
                .unwrap_or_default();
            *query = web_sys::UrlSearchParams::new_with_str(&search).ok();
        }
        query.as_ref().and_then(|p| p.get(name))
    })
}

/// The payload of a lesson link (`#lesson=1j...`, already unpacked), if the page has one.
pub fn lesson_payload() -> Option<String> {
    FRAGMENT.with(|f| {
        f.borrow()
            .trim_start_matches('#')
            .strip_prefix("lesson=")
            .map(String::from)
    })
}

/// The scenario the playground keeps (a link, unpacked), if there is one that reads; the lesson
/// builder starts from it too.
pub fn stored_link() -> Option<sbp_scenario::link::Link> {
    let text = storage()?.get_item(STORAGE_KEY).ok().flatten()?;
    decode_link(&text).ok()
}

pub fn save(sim: &Simulation) {
    if let Some(s) = storage() {
        // A link that always opens again: at this instant if replaying to it fits the budget.
        // Stored unpacked (`1j`), so saving is synchronous and cheap.
        let link = link_at(sim.scenario().clone(), sim.now(), None);
        let payload = sbp_json_payload(&serde_json::to_string(&link.scenario).unwrap_or_default());
        let _ = s.set_item(STORAGE_KEY, &link_fragment(&payload, None, &link));
    }
}

/// `json` as a link payload (`1j` + base64url), by the browser's own base64.
pub fn json_payload(json: &str) -> String {
    sbp_json_payload(json)
}

/// Builds a link that opens exactly this scenario, instant and speed, and hands it to `done`
/// (the scenario, and the checkpoint of its state when it has one, are packed with the
/// browser's deflate, which answers later: the fragment is written here with a mark where each
/// payload goes).
pub fn share_url(sim: &mut Simulation, speed: u32, done: impl FnOnce(String) + 'static) {
    share_link_url(sbp_scenario::link::link_to(sim, Some(speed)), done)
}

/// The page's address for `link`, handed to `done` (as [`share_url`]).
pub fn share_link_url(mut link: sbp_scenario::link::Link, done: impl FnOnce(String) + 'static) {
    let base = share_base();
    let json = serde_json::to_string(&link.scenario).unwrap_or_default();
    let checkpoint = link.checkpoint.take().unwrap_or_default();
    let marks = (!checkpoint.is_empty()).then_some("\u{2}");
    let template = format!("{base}#{}", link_fragment("\u{1}", marks, &link));
    let done: Box<dyn FnOnce(String)> = Box::new(done);
    let on_packed = wasm_bindgen::closure::Closure::once_into_js(done);
    sbp_share(
        &template,
        json.as_bytes(),
        &checkpoint,
        wasm_bindgen::JsCast::unchecked_ref(&on_packed),
    );
}

/// The page's address for a link: without its fragment, `live` and `room` (a link opens a
/// run where it was, in any playground; it never follows a server or joins a room).
fn share_base() -> String {
    let Some(location) = web_sys::window().map(|w| w.location()) else {
        return String::new();
    };
    let search = location.search().unwrap_or_default();
    let query = match web_sys::UrlSearchParams::new_with_str(&search) {
        Ok(params) => {
            params.delete("live");
            params.delete("room");
            let q = String::from(params.to_string());
            if q.is_empty() {
                q
            } else {
                format!("?{q}")
            }
        }
        Err(_) => search,
    };
    format!(
        "{}{}{query}",
        location.origin().unwrap_or_default(),
        location.pathname().unwrap_or_default()
    )
}

// The link payloads, with the browser's base64 and deflate (CompressionStream): the same
// format `sbp_scenario::link` reads and writes (`1j` base64url JSON, `1z` base64url raw
// deflate), without a compressor in the wasm.
#[wasm_bindgen::prelude::wasm_bindgen(inline_js = r#"
const b64url = (bytes) => {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};
const MAX_JSON = 4 * 1024 * 1024;
// A packed (`s=1z...` or `lesson=1z...`) payload in `text` inflated to its `1j` form, then `done(text)`; a payload
// that does not inflate (or inflates past MAX_JSON) is left as it is, and the Rust decoder
// says it is damaged.
export function sbp_unpack(text, done) {
  const m = /(^|[#&?])(s|lesson|c)=1z([A-Za-z0-9_\-]*)/.exec(text);
  if (!m) { done(text); return; }
  const keep = () => done(text);
  try {
    const b64 = m[3].replace(/-/g, '+').replace(/_/g, '/');
    const bin = atob(b64 + '==='.slice((b64.length + 3) % 4));
    const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
    const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw')).getReader();
    const parts = []; let size = 0;
    const pump = () => reader.read().then(({ done: end, value }) => {
      if (end) {
        const all = new Uint8Array(size); let at = 0;
        for (const p of parts) { all.set(p, at); at += p.length; }
        // The next packed payload (a link's checkpoint after its scenario), if any.
        sbp_unpack(text.replace(m[2] + '=1z' + m[3], m[2] + '=1j' + b64url(all)), done);
        return;
      }
      size += value.length;
      if (size > MAX_JSON) { reader.cancel(); keep(); return; }
      parts.push(value);
      return pump();
    });
    pump().catch(keep);
  } catch (e) { keep(); }
}
export function sbp_tick_work(ms) {
  const list = window.__sbpTickWork || (window.__sbpTickWork = []);
  list.push(ms);
  if (list.length > 2000) list.shift();
}
// Follows sbp serve's feed (/live/events): each event's kind and data to `on`; on a lost
// connection `on('lost')`, and the EventSource tries again by itself.
export function sbp_follow(url, kinds, on) {
  const es = new EventSource(url);
  for (const kind of kinds.split(',')) es.addEventListener(kind, (e) => on(kind, e.data));
  es.onerror = () => on('lost', '');
}
// A change on the server (a clock move, a room's): live.rs and rooms/ there ask for the header.
export function sbp_post_live(url, body, done) {
  fetch(url, { method: 'POST', headers: { 'x-sbp-live': '1' }, body })
    .then((r) => r.text().then((t) => done(r.ok, t)), () => done(false, ''));
}
// Where the learner is in the lessons, for a workshop's room (web/room.js listens; the last
// one is kept for it, which may load after the app).
export function sbp_lesson_at(json) {
  window.sbpLessonAt = json;
  window.dispatchEvent(new CustomEvent('sbp-lesson-at', { detail: json }));
}
// `text` saved as a file called `name`.
export function sbp_download(name, text) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}
export function sbp_json_payload(json) { return '1j' + b64url(new TextEncoder().encode(json)); }
const packed = (bytes) => {
  const plain = '1j' + b64url(bytes);
  try {
    return new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream('deflate-raw'))).arrayBuffer()
      .then((b) => { const p = new Uint8Array(b); return p.length < bytes.length ? '1z' + b64url(p) : plain; }, () => plain);
  } catch (e) { return Promise.resolve(plain); }
};
// `done()` once the page shows on the reader's screen: an embed's frame scrolled into view
// (an IntersectionObserver in a frame measures against the top-level viewport).
export function sbp_when_visible(done) {
  if (typeof IntersectionObserver === 'undefined') { done(); return; }
  const o = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) { o.disconnect(); done(); }
  });
  o.observe(document.documentElement);
}
// `done()` in the task after the next frame is painted.
export function sbp_after_paint(done) {
  requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => done();
    channel.port2.postMessage(0);
  });
}
// A share link: `template` with its scenario's payload at \u0001 and its checkpoint's (if any)
// at \u0002, each packed when that is smaller.
export function sbp_share(template, scenario, checkpoint, done) {
  const c = checkpoint.slice();
  Promise.all([packed(scenario.slice()), c.length ? packed(c) : '']).then(([s, k]) => done(template.replace('\u0001', s).replace('\u0002', k)));
}
"#)]
extern "C" {
    fn sbp_json_payload(json: &str) -> String;
    fn sbp_share(template: &str, scenario: &[u8], checkpoint: &[u8], done: &js_sys::Function);
    fn sbp_unpack(text: &str, done: &js_sys::Function);
    fn sbp_when_visible(done: &js_sys::Function);
    fn sbp_after_paint(done: &js_sys::Function);
    fn sbp_tick_work(ms: f64);
    fn sbp_follow(url: &str, kinds: &str, on: &js_sys::Function);
    fn sbp_post_live(url: &str, body: Option<String>, done: &js_sys::Function);
    fn sbp_download(name: &str, text: &str);
    fn sbp_lesson_at(json: &str);
}

/// Says where the learner is in the lessons (a JSON object: lesson, part, of, reached, hints,
/// answer) to a workshop's room script, if the page has one (web/room.js).
pub fn lesson_at(json: &str) {
    sbp_lesson_at(json);
}

/// Follows the feed at `url` for the page's lifetime: `on(kind, data)` for each event of the
/// `kinds` (comma-separated), and `lost` when the connection drops (the browser reconnects).
pub fn follow(url: &str, kinds: &str, on: impl FnMut(String, String) + 'static) {
    let on: Box<dyn FnMut(String, String)> = Box::new(on);
    let on = wasm_bindgen::closure::Closure::wrap(on);
    sbp_follow(url, kinds, wasm_bindgen::JsCast::unchecked_ref(on.as_ref()));
    on.forget();
}

/// POSTs `body` to `url` (a change on `sbp serve`: a clock move, a room's); `done(ok, body)`.
pub fn post_live(url: &str, body: Option<String>, done: impl FnOnce(bool, String) + 'static) {
    let done: Box<dyn FnOnce(bool, String)> = Box::new(done);
    let done = wasm_bindgen::closure::Closure::once_into_js(done);
    sbp_post_live(url, body, wasm_bindgen::JsCast::unchecked_ref(&done));
}

/// Puts `url` in the address bar in place of the page's (a reload opens it), without loading it.
pub fn replace_url(url: &str) {
    if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(url));
    }
    QUERY.with(|query| query.borrow_mut().take());
}

/// Offers `text` as a file named `name`.
pub fn download(name: &str, text: &str) {
    sbp_download(name, text);
}

/// Whether the page comes from this machine (only there may `sbp serve` be asked about).
pub fn on_loopback() -> bool {
    let host = web_sys::window()
        .and_then(|w| w.location().hostname().ok())
        .unwrap_or_default();
    host == "127.0.0.1" || host == "localhost" || host == "[::1]"
}

/// Hands `text` (a link, a fragment) to `done` with a packed payload inflated by the browser's
/// DecompressionStream, so the Rust decoder needs no inflater.
pub fn unpack(text: &str, done: impl FnOnce(String) + 'static) {
    let done: Box<dyn FnOnce(String)> = Box::new(done);
    let on_unpacked = wasm_bindgen::closure::Closure::once_into_js(done);
    sbp_unpack(text, wasm_bindgen::JsCast::unchecked_ref(&on_unpacked));
}

/// `done()` once the next frame is painted (the first screen drawn before what is under it).
pub fn after_paint(done: impl FnOnce() + 'static) {
    let done: Box<dyn FnOnce()> = Box::new(done);
    let on_painted = wasm_bindgen::closure::Closure::once_into_js(done);
    sbp_after_paint(wasm_bindgen::JsCast::unchecked_ref(&on_painted));
}

/// `done()` once the page shows on the reader's screen (an embed scrolled into view; a page
/// of its own at once).
pub fn when_visible(done: impl FnOnce() + 'static) {
    let done: Box<dyn FnOnce()> = Box::new(done);
    let on_visible = wasm_bindgen::closure::Closure::once_into_js(done);
    sbp_when_visible(wasm_bindgen::JsCast::unchecked_ref(&on_visible));
}

thread_local! {
    /// The page's `#fragment`, unpacked before the first render.
    static FRAGMENT: std::cell::RefCell<String> = std::cell::RefCell::default();
}

/// The page's `#fragment` as unpacked before the first render.
pub fn fragment() -> String {
    FRAGMENT.with(|f| f.borrow().clone())
}

/// Unpacks the page's `#fragment`, then calls `done` (main runs this before the first render).
pub fn unpack_fragment(done: impl FnOnce() + 'static) {
    let hash = web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default();
    unpack(&hash, move |fragment| {
        FRAGMENT.with(|f| *f.borrow_mut() = fragment);
        done();
    });
}

pub fn copy_to_clipboard(text: &str) {
    if let Some(w) = web_sys::window() {
        let _ = w.navigator().clipboard().write_text(text);
    }
}

/// Whether the user asked for less motion.
pub fn reduced_motion() -> bool {
    web_sys::window()
        .and_then(|w| {
            w.match_media("(prefers-reduced-motion: reduce)")
                .ok()
                .flatten()
        })
        .is_some_and(|m| m.matches())
}

thread_local! {
    static TICK_STARTED: std::cell::Cell<Option<f64>> = const { std::cell::Cell::new(None) };
}

/// Marks the start of a clock tick's work (engine + render), for the browser benchmark.
pub fn tick_started(now: f64) {
    TICK_STARTED.with(|t| t.set(Some(now)));
}

/// After the render a tick caused: appends its duration (ms) to `window.__sbpTickWork`, which
/// `tests/e2e/bench.mjs` reads. Keeps the last 2,000.
pub fn tick_rendered() {
    let Some(start) = TICK_STARTED.with(|t| t.take()) else {
        return;
    };
    sbp_tick_work(now_ms() - start);
}

/// A file next to the page that could not be had (no answer, or not 200); `i18n` words it.
#[derive(Clone, Debug, PartialEq)]
pub struct FetchError {
    pub url: String,
}

/// What went wrong opening a file the page fetches (a preset, a lesson, a catalog): it could not
/// be had, or it does not read as what it should be. `i18n` words it.
#[derive(Clone, Debug)]
pub enum LoadError {
    Fetch(FetchError),
    Scenario(sbp_scenario::ScenarioError),
    Lesson(sbp_scenario::Text),
    /// A catalog that does not read (its reader says the line, in English: it is the
    /// catalog's author who reads it).
    Catalog(String),
}

impl From<FetchError> for LoadError {
    fn from(e: FetchError) -> LoadError {
        LoadError::Fetch(e)
    }
}

/// Once the page has drawn what an action changed, puts the keyboard's focus on the first
/// element one of `selectors` finds (an element an action removed would drop it to the page's
/// top). What it names may not be drawn yet (the panels under the clock follow the first
/// frame): it is looked for again every 50 ms, for at most a second.
pub fn focus_soon(selectors: Vec<String>) {
    focus_when_drawn(selectors, 0);
}

fn focus_when_drawn(selectors: Vec<String>, tries: u32) {
    const TRIES: u32 = 20;
    let wait = if tries == 0 { 0 } else { 50 };
    gloo_timers::callback::Timeout::new(wait, move || {
        let Some(document) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        match selectors
            .iter()
            .find_map(|s| document.query_selector(s).ok().flatten())
        {
            Some(element) => focus_on(&element),
            None if tries < TRIES => focus_when_drawn(selectors, tries + 1),
            None => {}
        }
    })
    .forget();
}

/// Focuses `element`; one that cannot take the focus gives it to the first control inside it,
/// or (none) takes it with `tabindex=-1`.
fn focus_on(element: &web_sys::Element) {
    use wasm_bindgen::JsCast;
    const CONTROLS: &str = "button, input, select, textarea, a[href], [tabindex]";
    let target = if element.matches(CONTROLS).unwrap_or(false) {
        Some(element.clone())
    } else {
        element.query_selector(CONTROLS).ok().flatten()
    };
    let target = target.unwrap_or_else(|| {
        let _ = element.set_attribute("tabindex", "-1");
        element.clone()
    });
    // Taking the focus brings it into view ([`watch_focus`]).
    if let Ok(html) = target.dyn_into::<web_sys::HtmlElement>() {
        let _ = html.focus();
    }
}

/// The element that has the keyboard's focus, if it is not the page itself.
fn focused(document: &web_sys::Document) -> Option<web_sys::Element> {
    document
        .active_element()
        .filter(|e| !matches!(e.tag_name().as_str(), "BODY" | "HTML"))
}

thread_local! {
    /// The element that took the keyboard's focus last, and where the focus goes if the page
    /// takes it away (selectors, first found first).
    static LAST_FOCUS: std::cell::RefCell<Option<(web_sys::Element, Vec<String>)>> =
        const { std::cell::RefCell::new(None) };
}

/// Follows the keyboard's focus (called once, at start): what takes it is kept out from under
/// the clock bar (WCAG 2.4.11), and remembered for [`restore_lost_focus`].
pub fn watch_focus() {
    use wasm_bindgen::JsCast;
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let on_focus =
        wasm_bindgen::closure::Closure::<dyn Fn(web_sys::Event)>::new(|e: web_sys::Event| {
            let Some(element) = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            else {
                return;
            };
            let chain = focus_chain(&element);
            LAST_FOCUS.with(|last| *last.borrow_mut() = Some((element, chain)));
            keep_focus_in_view();
        });
    let _ = document.add_event_listener_with_callback("focusin", on_focus.as_ref().unchecked_ref());
    on_focus.forget();
}

/// Where the focus goes if `element` goes: an element with the same id (a form drawn again),
/// the same message's card wherever it is in its lane (a lock lapsed, a message dead-lettered)
/// and the lane, in a lesson what replaced the control (the goal reached, the last hint), then
/// the closest enclosing element with an id that is still there.
fn focus_chain(element: &web_sys::Element) -> Vec<String> {
    let mut chain = Vec::new();
    let clean = |s: String| s.replace(['\\', '"'], "");
    if !element.id().is_empty() {
        chain.push(format!("#{}", clean(element.id())));
    }
    let card = element.closest(".card[data-seq]").ok().flatten();
    let lane = element.closest(".lane[data-entity]").ok().flatten();
    if let Some(lane) = lane {
        let entity = lane.get_attribute("data-entity").unwrap_or_default();
        let seq = card.and_then(|c| c.get_attribute("data-seq")?.parse::<u64>().ok());
        if let Some(seq) = seq {
            chain.push(card_selector(&entity, seq));
        }
        chain.push(lane_selector(&entity));
    }
    if element.closest("#lesson").ok().flatten().is_some() {
        chain.extend(["#goal-reached", "#hints li:last-child", "#lesson-step"].map(String::from));
    }
    let mut up = element.parent_element();
    while let Some(ancestor) = up {
        if !ancestor.id().is_empty() {
            chain.push(format!("#{}", clean(ancestor.id())));
        }
        up = ancestor.parent_element();
    }
    chain
}

/// After the page is drawn: if the element that had the focus is gone (and with it the focus,
/// to the page's body), the focus goes where [`focus_chain`] said (WCAG 2.4.3). A focus the
/// reader took away themselves (a click on the page) is left where it is.
pub fn restore_lost_focus() {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if focused(&document).is_some() {
        return;
    }
    // Taken out before focusing: the focus handler writes it.
    let chain = LAST_FOCUS.with(|last| match last.borrow().as_ref() {
        Some((element, chain)) if !element.is_connected() => Some(chain.clone()),
        _ => None,
    });
    if let Some(element) = chain
        .iter()
        .flatten()
        .find_map(|s| document.query_selector(s).ok().flatten())
    {
        focus_on(&element);
    }
}

/// Scrolls the element that has the keyboard's focus back into view when a change of the page
/// (a message, a panel that grew) moved it out of the window or under the clock bar that stays
/// on top (WCAG 2.4.11).
pub fn keep_focus_in_view() {
    gloo_timers::callback::Timeout::new(0, bring_focus_into_view).forget();
}

fn bring_focus_into_view() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Some(document) = window.document() else {
        return;
    };
    let Some(focused) = focused(&document) else {
        return;
    };
    let clock = document.query_selector(".clock").ok().flatten();
    if clock.as_ref().is_some_and(|c| c.contains(Some(&focused))) {
        return;
    }
    // The clock bar covers the page's top while it is stuck there.
    let covered = clock
        .map(|c| c.get_bounding_client_rect())
        .filter(|r| r.top() <= 0.5)
        .map_or(0.0, |r| r.bottom());
    let height = window
        .inner_height()
        .ok()
        .and_then(|h| h.as_f64())
        .unwrap_or(0.0);
    let rect = focused.get_bounding_client_rect();
    // What is taller than the window shows from its top.
    let fits = rect.height() + 16.0 <= height - covered;
    if rect.top() < covered || (rect.bottom() > height && !fits) {
        window.scroll_by_with_x_and_y(0.0, rect.top() - covered - 8.0);
    } else if rect.bottom() > height {
        window.scroll_by_with_x_and_y(0.0, rect.bottom() - height + 8.0);
    }
}

/// Takes away the first visit's static welcome (index.html paints it before the wasm runs) and
/// says what the reader chose on it meanwhile (`lesson`, `sandbox`), if anything.
pub fn take_first_screen() -> Option<String> {
    let document = web_sys::window()?.document()?;
    if let Some(section) = document.get_element_by_id("first-screen") {
        section.remove();
    }
    let root = document.document_element()?;
    let choice = root.get_attribute("data-first-choice");
    let _ = root.remove_attribute("data-first-choice");
    choice
}

/// Fetches a text file next to the page (the presets are data, fetched when needed), then calls
/// `done` with it or with what failed.
pub fn fetch_text(url: &str, done: impl FnOnce(Result<String, FetchError>) + 'static) {
    fetch_boxed(url, Box::new(done))
}

/// A text the page carries in a data block (`<script type="text/plain" id=...>`: the playground's
/// page holds its catalogs and lesson track, written in by scripts/carry.mjs, so that they do not
/// share the slow phone's line with the wasm), else the file at `url`, fetched.
pub fn carried_or_fetched(
    id: &str,
    url: &str,
    done: impl FnOnce(Result<String, FetchError>) + 'static,
) {
    let carried = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
        .and_then(|e| e.text_content());
    match carried {
        Some(text) => done(Ok(text)),
        None => fetch_boxed(url, Box::new(done)),
    }
}

/// Fetches `urls` side by side; `done` gets their texts in the same order, or the first of them
/// that could not be had.
pub fn fetch_texts(
    urls: Vec<String>,
    done: impl FnOnce(Result<Vec<String>, FetchError>) + 'static,
) {
    type Pending = (
        Vec<Option<Result<String, FetchError>>>,
        Option<Box<dyn FnOnce(Result<Vec<String>, FetchError>)>>,
    );
    let pending: Pending = (urls.iter().map(|_| None).collect(), Some(Box::new(done)));
    let pending = std::rc::Rc::new(std::cell::RefCell::new(pending));
    for (i, url) in urls.iter().enumerate() {
        let pending = pending.clone();
        fetch_boxed(
            url,
            Box::new(move |text| {
                let mut p = pending.borrow_mut();
                p.0[i] = Some(text);
                if p.0.iter().all(Option::is_some) {
                    let all = p.0.drain(..).flatten().collect::<Result<Vec<_>, _>>();
                    let done = p.1.take();
                    drop(p);
                    if let Some(done) = done {
                        done(all);
                    }
                }
            }),
        );
    }
}

/// The one body of [`fetch_text`] (a boxed callback: one copy in the wasm, not one per caller).
fn fetch_boxed(url: &str, done: Box<dyn FnOnce(Result<String, FetchError>)>) {
    let failed = FetchError {
        url: url.to_string(),
    };
    let Ok(xhr) = web_sys::XmlHttpRequest::new() else {
        return done(Err(failed));
    };
    if xhr.open("GET", url).is_err() {
        return done(Err(failed));
    }
    let request = xhr.clone();
    let on_end = wasm_bindgen::closure::Closure::once_into_js(move || {
        let ok = request.status().is_ok_and(|s| s == 200);
        match request.response_text() {
            Ok(Some(text)) if ok => done(Ok(text)),
            _ => done(Err(failed)),
        }
    });
    xhr.set_onloadend(Some(wasm_bindgen::JsCast::unchecked_ref(&on_end)));
    let _ = xhr.send();
}

/// The selector of the lane of entity `lane` (a queue's, topic's or subscription's path).
pub fn lane_selector(lane: &str) -> String {
    format!(".lane[data-entity=\"{}\"]", lane.replace(['\\', '"'], ""))
}

/// The selector of message `seq`'s card in the lane of `lane`, wherever it is there (its
/// dead-letter queue's part included).
pub fn card_selector(lane: &str, seq: u64) -> String {
    format!(
        "{} .card[data-seq=\"{seq}\"] .card-body",
        lane_selector(lane)
    )
}

/// Scrolls the lane of entity `path` into view and flashes it (a click on the map).
pub fn show_lane(path: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if let Ok(Some(lane)) = doc.query_selector(&lane_selector(path)) {
        lane.scroll_into_view();
        let _ = lane.class_list().remove_1("flash");
        let _ = lane.class_list().add_1("flash");
    }
}
