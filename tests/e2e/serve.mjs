// A plain static server for dist/, on 127.0.0.1 only; and what the tests and the benchmark
// both do in the page.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const TYPES = { '.json': 'application/json', '.ftl': 'text/plain; charset=utf-8', '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.svg': 'image/svg+xml' };

// `brotli`: each file is sent brotli-compressed (quality 11, once per file) to a browser that
// accepts it, as a production host serves them; the benchmark's slow-phone figures need it.
export function serve(root, { brotli = false } = {}) {
  const packed = new Map();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    let file = path.join(root, decodeURIComponent(url.pathname));
    if (!file.startsWith(root)) { res.writeHead(403); return res.end(); }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    fs.readFile(file, (err, data) => {
      if (err) { res.writeHead(404); return res.end('not found'); }
      const headers = { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' };
      if (brotli && /\bbr\b/.test(req.headers['accept-encoding'] || '')) {
        if (!packed.has(file)) packed.set(file, zlib.brotliCompressSync(data, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }));
        data = packed.get(file);
        headers['content-encoding'] = 'br';
      }
      res.writeHead(200, headers);
      res.end(data);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/` })));
}

export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

// A producer at `rate` msg/s and `instances` consumers working an exponential `mean` each, started
// from the Traffic tab.
export async function startTraffic(page, { rate, instances, mean }) {
  await page.click('#tab-traffic');
  await page.fill('#producer-rate', String(rate));
  await page.click('#producer-submit');
  await page.fill('#consumer-instances', String(instances));
  await page.selectOption('#consumer-kind', 'exponential');
  await page.fill('#consumer-time', mean);
  await page.click('#consumer-submit');
}

// A test that cannot run on this machine (a tool that cannot be installed), said as `skip`
// with why instead of passing.
export class Skip extends Error {}

// Runs the `tests` ({ name, fn(ctx) }) whose names hold `only`, each in a fresh context of
// `browser`: prints `ok`, `FAIL` with the first lines of why, or `skip`; returns the tally.
export async function runTests(browser, tests, only = '') {
  const tally = { passed: 0, failed: 0, skipped: 0 };
  for (const { name, fn } of tests.filter((t) => t.name.includes(only))) {
    const ctx = await browser.newContext();
    try {
      await fn(ctx);
      tally.passed++;
      console.log(`ok   ${name}`);
    } catch (e) {
      if (e instanceof Skip) {
        tally.skipped++;
        console.log(`skip ${name}\n     ${e.message}`);
      } else {
        tally.failed++;
        console.log(`FAIL ${name}\n     ${String(e.message || e).split('\n').slice(0, 3).join('\n     ')}`);
      }
    } finally {
      await ctx.close();
    }
  }
  return tally;
}
