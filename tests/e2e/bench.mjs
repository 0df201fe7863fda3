// Browser benchmark: time to first render, frame times (median, p95) with 1,000 and 10,000
// messages at x60, traffic, rewinds, the playground's bound of 1,000,000 stored messages, and
// the wasm size (raw, gzip, brotli). `node tests/e2e/bench.mjs` after a release build
// (./scripts/build-ui.sh); one figure alone: `node tests/e2e/bench.mjs rewind` (ten minutes of
// backlog), `million` (the bound: play at x60 and rewind), `rate` (10,000 msg/s at x1),
// `first-screen` or `language`.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { serve, startTraffic, CHROMIUM_ARGS } from './serve.mjs';

const root = process.env.SBP_DIST || path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist');
// The whole wasm (the page carries its head; `.rest.wasm` is the rest: scripts/carry.mjs).
const wasmFile = fs.readdirSync(root).find((f) => f.endsWith('_bg.wasm'));
const wasm = fs.readFileSync(path.join(root, wasmFile));
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
const gzip = zlib.gzipSync(wasm, { level: 9 }).length;
const brotli = zlib.brotliCompressSync(wasm, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

const { server, url } = await serve(root);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: CHROMIUM_ARGS });

// The lanes drawn: from navigation start to the task after the frame that paints them.
async function firstRender() {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.addInitScript(() => {
    new MutationObserver((_, obs) => {
      if (!document.querySelector('.lane')) return;
      obs.disconnect();
      requestAnimationFrame(() => setTimeout(() => { window.__firstRender = performance.now(); }, 0));
    }).observe(document, { childList: true, subtree: true });
  });
  await page.goto(url);
  await page.waitForFunction(() => window.__firstRender > 0);
  const t = await page.evaluate(() => window.__firstRender);
  await ctx.close();
  return t;
}

// Switching language with a message in the lanes: from choosing it in the picker to the page
// drawn in it (the catalog fetched, every panel re-rendered), each language in turn, 3 rounds.
async function languageSwitch() {
  const ctx = await browser.newContext({ viewport: { width: 1500, height: 1000 } });
  const page = await ctx.newPage();
  await page.goto(url + '?lang=en');
  await page.waitForSelector('.lane');
  await page.click('#send-button');
  const play = { en: 'Play', de: 'Abspielen', nl: 'Afspelen', sv: 'Spela' };
  const times = [];
  for (let round = 0; round < 3; round++) {
    for (const lang of ['de', 'nl', 'sv', 'en']) {
      times.push(await page.evaluate(([lang, word]) => new Promise((resolve) => {
        const t0 = performance.now();
        const select = document.querySelector('#lang');
        select.value = lang;
        select.dispatchEvent(new Event('change', { bubbles: true }));
        const check = () => (document.querySelector('#play')?.textContent.includes(word)
          ? requestAnimationFrame(() => resolve(performance.now() - t0))
          : requestAnimationFrame(check));
        check();
      }), [lang, play[lang]]));
    }
  }
  await ctx.close();
  return stats(times);
}

function stats(deltas) {
  const s = [...deltas].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { frames: s.length, median: q(0.5), p95: q(0.95), max: s[s.length - 1] };
}

async function frames(messages) {
  const ctx = await browser.newContext({ viewport: { width: 1500, height: 1000 } });
  const page = await ctx.newPage();
  page.setDefaultTimeout(120000);
  await page.goto(url);
  await page.waitForSelector('.lane');
  await page.fill('#send-ttl', '2h');
  await page.fill('#send-count', String(messages));
  await page.click('#send-button');
  await page.locator('.lane[data-entity="orders"] .counts', { hasText: `${messages} active` }).waitFor();
  // Some of them locked, so lock countdowns run too.
  await page.click('#tab-receive');
  await page.fill('#receive-count', '100');
  await page.click('#receive-button');
  await page.selectOption('#speed', '60');
  await page.click('#play');
  await page.waitForTimeout(500);
  await page.evaluate(() => { window.__sbpTickWork = []; });
  const deltas = await page.evaluate(() => new Promise((resolve) => {
    const out = [];
    let last = performance.now();
    const end = last + 5000;
    function frame(t) {
      out.push(t - last);
      last = t;
      if (t < end) requestAnimationFrame(frame); else resolve(out);
    }
    requestAnimationFrame(frame);
  }));
  const work = await page.evaluate(() => window.__sbpTickWork || []);
  await ctx.close();
  return { intervals: stats(deltas), tick_work: stats(work) };
}

// Ten consumers and a producer at 1,000 messages a second for a simulated hour, at x60.
// Twenty moves of the timeline slider to random instants before `reached` (a fixed sequence),
// each timed from the change to the painted frame: the frame after the state is rendered has
// run its animation-frame callbacks, and a task queued there runs once that frame is painted.
async function rewinds(page, reached) {
  return page.evaluate(async ({ reached }) => {
    let seed = 7;
    const random = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
    const slider = document.querySelector('#timeline');
    const out = [];
    for (let i = 0; i < 20; i++) {
      const at = Math.floor(random() * reached);
      const t0 = performance.now();
      slider.value = String(at);
      slider.dispatchEvent(new Event('change', { bubbles: true }));
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      out.push(performance.now() - t0);
    }
    return out;
  }, { reached });
}

// A wide page with a producer and consumers started from the Traffic tab at x60, not yet playing.
async function trafficPage(spec, timeout) {
  const ctx = await browser.newContext({ viewport: { width: 1500, height: 1000 } });
  const page = await ctx.newPage();
  page.setDefaultTimeout(timeout);
  await page.goto(url);
  await page.waitForSelector('.lane');
  await startTraffic(page, spec);
  await page.selectOption('#speed', '60');
  return { ctx, page };
}

// The simulated instant the page's clock shows, in ms (from its UTC time: t= drops nothing).
const simulatedMs = (page) => page.textContent('#clock-utc').then((utc) => Date.parse(utc) - Date.parse('2026-01-01T00:00:00Z'));

// Frame intervals and work per clock tick while the page plays for `ms` of wall time (the
// clock's own tick work recorded by the app in window.__sbpTickWork).
async function playFrames(page, ms) {
  await page.evaluate(() => { window.__sbpTickWork = []; });
  await page.click('#play');
  const deltas = await page.evaluate((ms) => new Promise((resolve) => {
    const out = [];
    let last = performance.now();
    const end = last + ms;
    function frame(t) {
      out.push(t - last);
      last = t;
      if (t < end) requestAnimationFrame(frame); else resolve(out);
    }
    requestAnimationFrame(frame);
  }), ms);
  await page.click('#pause');
  const work = await page.evaluate(() => window.__sbpTickWork || []);
  return { intervals: stats(deltas), tick_work: stats(work) };
}

// Rewind in the setting: 1,000 msg/s with ten consumers falling behind (each 100 ms a
// message: 100 msg/s taken, the backlog grows about 900 a second), run at x60 for `seconds` of
// simulated time: 600 (ten minutes, about 540,000 stored), or 1,150 (the playground's bound of
// 1,000,000 stored), where 5 s of play at x60 with the map shown is measured too.
async function backlogRewind(seconds = 600) {
  const { ctx, page } = await trafficPage({ rate: 1000, instances: 10, mean: '100ms' }, 900000);
  await page.click('#play');
  await page.waitForFunction((ms) => (Date.parse(document.querySelector('#clock-utc').textContent) - Date.parse('2026-01-01T00:00:00Z')) >= ms, seconds * 1000, { polling: 500 });
  await page.click('#pause');
  const counts = await page.locator('.lane[data-entity="orders"] .counts').textContent();
  const played = seconds > 600 ? await playFrames(page, 5000) : undefined;
  const reached = await simulatedMs(page);
  const moves = await rewinds(page, reached);
  await ctx.close();
  return { reached_ms: reached, counts, rewind: stats(moves), played };
}

// A producer at 10,000 msg/s (the playground's highest rate) and 100 consumers keeping up, at
// x1 with the map shown: 10 s of wall time.
async function tenThousandPerSecond() {
  const { ctx, page } = await trafficPage({ rate: 10000, instances: 100, mean: '8ms' }, 120000);
  await page.selectOption('#speed', '1');
  const played = await playFrames(page, 10000);
  const totals = await page.locator('#metrics .hint').textContent();
  await ctx.close();
  return { ...played, totals };
}

async function traffic() {
  const { ctx, page } = await trafficPage({ rate: 1000, instances: 10, mean: '8ms' }, 120000);
  await page.evaluate(() => { window.__sbpTickWork = []; });
  await page.click('#play');
  const deltas = await page.evaluate(() => new Promise((resolve) => {
    const out = [];
    let last = performance.now();
    const end = last + 60000;
    function frame(t) {
      out.push(t - last);
      last = t;
      if (t < end) requestAnimationFrame(frame); else resolve(out);
    }
    requestAnimationFrame(frame);
  }));
  await page.click('#pause');
  const work = await page.evaluate(() => window.__sbpTickWork || []);
  const simulated = await page.textContent('#clock-rel');
  const totals = await page.locator('#metrics .hint').textContent();
  // Instant rewind: twenty moves of the timeline slider to random instants of the hour just
  // run (a fixed sequence), each timed from the change to the painted frame.
  const end = await page.locator('#timeline').evaluate((el) => Number(el.max));
  const reached = await simulatedMs(page);
  const moves = await rewinds(page, reached);
  const clockAfter = await page.textContent('#clock-rel');
  // A link at the hour's end, opened afresh.
  await page.locator('#timeline').evaluate((el, v) => { el.value = String(v); el.dispatchEvent(new Event('change', { bubbles: true })); }, reached);
  await page.click('#share');
  const link = await page.inputValue('#share-link');
  const expected = await page.textContent('#clock-rel');
  await ctx.close();
  const other = await browser.newContext({ viewport: { width: 1500, height: 1000 } });
  const p2 = await other.newPage();
  p2.setDefaultTimeout(120000);
  const t0 = Date.now();
  await p2.goto(link);
  await p2.locator('#clock-rel', { hasText: expected }).waitFor({ timeout: 20000 }).catch(() => {});
  const opened = { ms: Date.now() - t0, clock: await p2.textContent('#clock-rel'), expected, notice: await p2.locator('#notice').textContent().catch(() => '') };
  await other.close();
  return { simulated, totals, intervals: stats(deltas), tick_work: stats(work.slice(-2000)), rewind: { ...stats(moves), end, clockAfter }, link_open: opened };
}

// The first screen on a slow phone, as Lighthouse's mobile profile throttles it (562.5 ms round
// trip, 1.47 Mbit/s down, 675 kbit/s up, CPU 4x slower, through Chromium's DevTools protocol),
// files served brotli-compressed, a first visit in Swedish on a 390x844 screen. Two instants
// from navigation start, each the task after the frame that paints it: the welcome painted (its
// Start button has its words) and the app running (the wasm drew the clock and its controls).
// Also from 127.0.0.1 unthrottled. `only` runs this alone: `node bench.mjs first-screen`.
async function firstScreen(throttled, runs = 9) {
  const { server: slow, url: slowUrl } = await serve(root, { brotli: true });
  // One visit first, not timed: the server compresses each file on its first request (about a
  // second for the wasm at brotli's best), which a host serving precompressed files never does.
  {
    const warm = await browser.newContext();
    const page = await warm.newPage();
    await page.goto(slowUrl + '?lang=sv');
    await page.waitForSelector('.clock');
    await warm.close();
  }
  const times = { welcome: [], app: [] };
  for (let i = 0; i < runs; i++) {
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await ctx.newPage();
    if (throttled) {
      const cdp = await ctx.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 562.5, downloadThroughput: 1474.56 * 1024 / 8, uploadThroughput: 675 * 1024 / 8 });
      await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
    }
    // Each is read in an animation frame and timed at the task after it: the frame painted.
    await page.addInitScript(() => {
      const seen = {};
      window.__firstScreen = seen;
      // Called in an animation frame: the timeout is the task after that frame.
      const painted = (key) => {
        seen[key] = -1;
        setTimeout(() => { seen[key] = performance.now(); }, 0);
      };
      const look = () => {
        const start = document.querySelector('[data-choice="lesson"], #start-first-lesson');
        if (!seen.welcome && start && start.textContent.trim() && start.getClientRects().length) painted('welcome');
        if (!seen.app && document.querySelector('.clock #play, .clock #pause')) painted('app');
        if (!seen.welcome || !seen.app) requestAnimationFrame(look);
      };
      requestAnimationFrame(look);
    });
    await page.goto(slowUrl + '?lang=sv', { waitUntil: 'commit' });
    await page.waitForFunction(() => window.__firstScreen && window.__firstScreen.welcome > 0 && window.__firstScreen.app > 0, null, { timeout: 60000, polling: 100 });
    const seen = await page.evaluate(() => window.__firstScreen);
    times.welcome.push(seen.welcome);
    times.app.push(seen.app);
    await ctx.close();
  }
  slow.close();
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { runs, welcome_ms: median(times.welcome), app_ms: median(times.app), welcome_all: times.welcome.map(Math.round), app_all: times.app.map(Math.round) };
}

if (process.argv[2] === 'rewind') {
  console.log(JSON.stringify(await backlogRewind()));
  await browser.close();
  server.close();
  process.exit(0);
}
if (process.argv[2] === 'million') {
  console.log(JSON.stringify(await backlogRewind(1150)));
  await browser.close();
  server.close();
  process.exit(0);
}
if (process.argv[2] === 'rate') {
  console.log(JSON.stringify(await tenThousandPerSecond()));
  await browser.close();
  server.close();
  process.exit(0);
}
if (process.argv[2] === 'language') {
  console.log(JSON.stringify(await languageSwitch()));
  await browser.close();
  server.close();
  process.exit(0);
}
if (process.argv[2] === 'first-screen') {
  const slow = await firstScreen(true);
  const fast = await firstScreen(false);
  console.log(JSON.stringify({ slow, fast, first_render_ms: await firstRender() }));
  await browser.close();
  server.close();
  process.exit(0);
}

const result = {
  first_screen_slow_phone: await firstScreen(true),
  first_screen_localhost: await firstScreen(false),
  wasm: { file: wasmFile, raw: wasm.length, gzip, brotli },
  first_render_ms: await firstRender(),
  language_switch: await languageSwitch(),
  frames_1k_x60: await frames(1000),
  frames_10k_x60: await frames(10000),
  traffic_1000_per_s_x60: await traffic(),
  backlog_rewind: await backlogRewind(),
  million: await backlogRewind(1150),
  rate_10000_x1: await tenThousandPerSecond(),
};
await browser.close();
server.close();

const g = (s) => `median ${s.median.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms, max ${s.max.toFixed(1)} ms (${s.frames} samples)`;
const f = (r) => `work per clock tick (engine + render): ${g(r.tick_work)}; frame intervals: ${g(r.intervals)}`;
console.log(`wasm after wasm-opt: ${kb(wasm.length)} raw, ${kb(gzip)} gzip, ${kb(brotli)} brotli (ceiling 300 KB brotli)`);
for (const page of ['lab', 'builder', 'emulator']) {
  const dir = path.join(root, page);
  const file = fs.existsSync(dir) && fs.readdirSync(dir).find((f) => f.endsWith('.wasm'));
  if (!file) continue;
  const bytes = fs.readFileSync(path.join(dir, file));
  const br = zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  console.log(`  the ${page} page's own wasm (loaded only there): ${kb(bytes.length)} raw, ${kb(br)} brotli`);
}
const fs1 = result.first_screen_slow_phone, fs0 = result.first_screen_localhost;
console.log(`first visit, slow phone (Lighthouse mobile throttling, brotli, Swedish, 390x844), median of ${fs1.runs}: welcome painted ${fs1.welcome_ms.toFixed(0)} ms (goal 2,500 ms), app running ${fs1.app_ms.toFixed(0)} ms (goal 3,500 ms)`);
console.log(`first visit from 127.0.0.1 unthrottled, median of ${fs0.runs}: welcome painted ${fs0.welcome_ms.toFixed(0)} ms, app running ${fs0.app_ms.toFixed(0)} ms (goal 300 ms)`);
console.log(`first render from 127.0.0.1: ${result.first_render_ms.toFixed(0)} ms (budget 300 ms)`);
console.log(`switching language (picker to page drawn in it, 12 switches): ${g(result.language_switch)} (budget 100 ms)`);
console.log(`frames, 1,000 messages at x60: ${f(result.frames_1k_x60)}`);
console.log(`frames, 10,000 messages at x60: ${f(result.frames_10k_x60)} (budget p95 16.7 ms)`);
const t = result.traffic_1000_per_s_x60;
console.log(`producer at 1,000 msg/s + 10 consumers, x60 for 60 s of wall time (to ${t.simulated}): ${f(t)}`);
console.log(`  ${t.totals}`);
console.log(`rewind within that hour, 20 random moves of the timeline, to the painted frame: ${g(t.rewind)} (budget median 100 ms)`);
const b = result.backlog_rewind;
console.log(`rewind in 10 min of 1,000 msg/s with 10 consumers falling behind (orders: ${b.counts}), 20 random moves, to the painted frame: ${g(b.rewind)} (budget 100 ms)`);
const m = result.million;
console.log(`at the bound (orders: ${m.counts}): 5 s of play at x60 with the map shown: ${f(m.played)} (budget p95 16.7 ms); 20 random moves of the timeline, to the painted frame: ${g(m.rewind)} (budget median 100 ms, p95 150 ms)`);
const r = result.rate_10000_x1;
console.log(`a producer at 10,000 msg/s + 100 consumers at x1 for 10 s: ${f(r)} (budget p95 16.7 ms); ${r.totals}`);
console.log(`a link at ${t.link_open.expected} of that run opened in ${t.link_open.ms} ms at ${t.link_open.clock} (budget 1 s)${t.link_open.notice ? ': ' + t.link_open.notice : ''}`);
console.log(JSON.stringify(result));
