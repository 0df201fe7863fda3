// What scripts/package.sh made, tried in Debian's chromium as users meet it:
// - the site tarball, unpacked under a docs site's sub-path (/docs/playground/): every page
//   (the app, the lab, the lesson builder, the emulator page, the embed demo) loads with no
//   failed request and keeps its Content-Security-Policy;
// - the packaged sbp started from a folder with no dist/ in it: the playground it serves from
//   memory, compressed, and the live page following that server.
// Usage: node tests/package/site.mjs (after ./scripts/package.sh)
import { chromium } from '../e2e/node_modules/playwright-core/index.mjs';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, runTests, CHROMIUM_ARGS } from '../e2e/serve.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const out = path.join(repo, 'target/package');
const version = /^version = "(.*)"/m.exec(fs.readFileSync(path.join(repo, 'Cargo.toml'), 'utf8'))[1];
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: CHROMIUM_ARGS });
const tests = [];
const test = (name, fn) => tests.push({ name, fn });

// Opens `address` and waits for `ready`; fails on any failed request or error status, or a
// page without its policy.
async function open(ctx, address, ready) {
  const page = await ctx.newPage();
  page.setDefaultTimeout(20000);
  const failed = [];
  page.on('requestfailed', (r) => failed.push(`${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.url()} ${r.status()}`); });
  await page.goto(address);
  await page.locator(ready).first().waitFor();
  const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
  if (!csp || !csp.includes("script-src 'self' 'wasm-unsafe-eval'")) throw new Error(`${address}: no policy: ${csp}`);
  if (failed.length) throw new Error(`${address}: ${failed.join(', ')}`);
  return page;
}

test('the site tarball works at a sub-path: every page, no failed request, its policy kept', async (ctx) => {
  const host = fs.mkdtempSync(path.join(os.tmpdir(), 'sbp-site-'));
  fs.mkdirSync(path.join(host, 'docs/playground'), { recursive: true });
  execFileSync('tar', ['-xzf', path.join(out, `service-bus-playground-site-${version}.tar.gz`), '-C', path.join(host, 'docs/playground'), '--strip-components=1']);
  const { server, url } = await serve(host);
  try {
    const base = `${url}docs/playground/`;
    await open(ctx, `${base}?lang=de&preset=lapsed-locks-to-dlq`, '.lane[data-entity="orders"]');
    await open(ctx, `${base}index.html?lang=sv&lesson=ttl-basics`, '#lesson-title');
    await open(ctx, `${base}lab/index.html?lang=en`, 'button');
    await open(ctx, `${base}builder/index.html?lang=nl`, 'button');
    await open(ctx, `${base}emulator/index.html?lang=en`, 'button');
    const demo = await open(ctx, `${base}embed-demo.html`, 'iframe');
    await demo.frameLocator('iframe').first().locator('.clock').waitFor();
    // A preset opened at an instant and a speed (the element's instant and speed).
    const at = await open(ctx, `${base}?lang=en&preset=lapsed-locks-to-dlq&at=20s&speed=10`, '#clock-rel');
    await at.locator('#clock-rel', { hasText: '20' }).waitFor();
    if (await at.inputValue('#speed') !== '10') throw new Error(`speed: ${await at.inputValue('#speed')}`);
    // A share link opened at another instant and speed than its own: replayed to it.
    const link = execFileSync(path.join(out, 'sbp'), ['encode', 'preset:lapsed-locks-to-dlq', '--at', '5s', '--speed', '60']).toString().trim();
    const moved = await open(ctx, `${base}?lang=en&at=25s&speed=100#${link}`, '#clock-rel');
    await moved.locator('#clock-rel', { hasText: '25' }).waitFor();
    if (await moved.inputValue('#speed') !== '100') throw new Error(`speed: ${await moved.inputValue('#speed')}`);
    // One that is not an instant is said, and the link opens where it would.
    const refused = await open(ctx, `${base}?lang=en&at=soon#${link}`, '#clock-rel');
    await refused.locator('#error-banner', { hasText: 'at=soon' }).waitFor();
  } finally {
    server.close();
    fs.rmSync(host, { recursive: true, force: true });
  }
});

test('the packaged sbp serves its UI from memory, compressed, from a folder without dist/', async (ctx) => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'sbp-bin-'));
  const ready = path.join(folder, 'ready.json');
  const sbp = spawn(path.join(out, 'sbp'), ['serve', '--amqp', '127.0.0.1:0', '--http', '127.0.0.1:0', '--ready-file', ready, '--quiet'], { cwd: folder });
  const exited = new Promise((r) => sbp.once('exit', r));
  try {
    for (let i = 0; i < 300 && !fs.existsSync(ready); i++) await new Promise((r) => setTimeout(r, 50));
    if (!fs.existsSync(ready)) throw new Error('sbp serve wrote no ready file');
    const { playground, live } = JSON.parse(fs.readFileSync(ready, 'utf8'));
    const encodings = [];
    const page = await ctx.newPage();
    page.on('response', (r) => { if (r.url().endsWith('.wasm')) encodings.push(r.headers()['content-encoding']); });
    await page.goto(playground + '?lang=en&preset=sessions');
    await page.locator('.lane').first().waitFor({ timeout: 20000 });
    if (!encodings.length || !encodings.every((e) => e === 'br' || e === 'gzip')) throw new Error(`the wasm came as ${encodings}`);
    await open(ctx, live + '&lang=en', '#live-badge');
  } finally {
    sbp.kill('SIGTERM');
    await exited;
    fs.rmSync(folder, { recursive: true, force: true });
  }
});

const { passed, failed } = await runTests(browser, tests, process.argv.slice(2).join(' '));
await browser.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
