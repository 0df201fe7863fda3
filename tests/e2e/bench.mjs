// Browser benchmark: time to first render, frame times (median, p95) with 1,000 and 10,000
// messages at x60, and the wasm size (raw, gzip, brotli). `node tests/e2e/bench.mjs` after a
// release build (./scripts/build-ui.sh).
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { serve, CHROMIUM_ARGS } from './serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist');
const wasmFile = fs.readdirSync(root).find((f) => f.endsWith('.wasm'));
const wasm = fs.readFileSync(path.join(root, wasmFile));
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
const gzip = zlib.gzipSync(wasm, { level: 9 }).length;
const brotli = zlib.brotliCompressSync(wasm, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

const { server, url } = await serve(root);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: CHROMIUM_ARGS });

async function firstRender() {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.addInitScript(() => {
    new MutationObserver((_, obs) => {
      if (document.querySelector('.lane')) { window.__firstRender = performance.now(); obs.disconnect(); }
    }).observe(document, { childList: true, subtree: true });
  });
  await page.goto(url);
  await page.waitForSelector('.lane');
  const t = await page.evaluate(() => window.__firstRender);
  await ctx.close();
  return t;
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
async function traffic() {
  const ctx = await browser.newContext({ viewport: { width: 1500, height: 1000 } });
  const page = await ctx.newPage();
  page.setDefaultTimeout(120000);
  await page.goto(url);
  await page.waitForSelector('.lane');
  await page.fill('#producer-rate', '1000');
  await page.click('#producer-submit');
  await page.fill('#consumer-instances', '10');
  await page.selectOption('#consumer-kind', 'exponential');
  await page.fill('#consumer-time', '8ms');
  await page.click('#consumer-submit');
  await page.selectOption('#speed', '60');
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
  await ctx.close();
  return { simulated, totals, intervals: stats(deltas), tick_work: stats(work.slice(-2000)) };
}

const result = {
  wasm: { file: wasmFile, raw: wasm.length, gzip, brotli },
  first_render_ms: await firstRender(),
  frames_1k_x60: await frames(1000),
  frames_10k_x60: await frames(10000),
  traffic_1000_per_s_x60: await traffic(),
};
await browser.close();
server.close();

const g = (s) => `median ${s.median.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms, max ${s.max.toFixed(1)} ms (${s.frames} samples)`;
const f = (r) => `work per clock tick (engine + render): ${g(r.tick_work)}; frame intervals: ${g(r.intervals)}`;
console.log(`wasm after wasm-opt: ${kb(wasm.length)} raw, ${kb(gzip)} gzip, ${kb(brotli)} brotli (budget 250 KB brotli)`);
console.log(`first render from 127.0.0.1: ${result.first_render_ms.toFixed(0)} ms (budget 500 ms)`);
console.log(`frames, 1,000 messages at x60: ${f(result.frames_1k_x60)}`);
console.log(`frames, 10,000 messages at x60: ${f(result.frames_10k_x60)} (budget p95 16.7 ms)`);
const t = result.traffic_1000_per_s_x60;
console.log(`producer at 1,000 msg/s + 10 consumers, x60 for 60 s of wall time (to ${t.simulated}): ${f(t)}`);
console.log(`  ${t.totals}`);
console.log(JSON.stringify(result));
