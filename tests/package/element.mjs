// The npm package (packages/npm) tried as its users would, in Debian's headless chromium:
// packed from the built site (dist/, or $SBP_SITE) with packages/npm/pack.mjs, installed from
// the tarball into a fresh project (offline: nothing is fetched), and used
//   - on a plain page at a sub-path (docs/embedding/page.html and iframe.html),
//   - by a React app with client-side navigation (element/react-app.jsx, bundled by esbuild),
//   - as Docusaurus would (docs/embedding/docusaurus.mdx compiled by @mdx-js/mdx, rendered on
//     the server and hydrated; docusaurus.config.js's scripts in the head; a webpack bundle),
//   - in a site VitePress built (docs/embedding/vitepress.config.mjs and markdown.md),
//   - in sites MkDocs built, with its default theme and with Material's instant navigation
//     (docs/embedding/mkdocs.yml and markdown.md; skipped, and said so, when a venv with
//     MkDocs cannot be made).
// Each snippet is read from docs/embedding/, and docs/EMBEDDING.md must show it as it is.
// `node tests/package/element.mjs [words]` runs the tests whose names hold those words.
// Prints `ok`, `FAIL` or `skip` per test, then `N passed, N failed, N skipped`; exits 1 on a
// failure.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from '../e2e/node_modules/playwright-core/index.mjs';
import { serve, runTests, Skip, CHROMIUM_ARGS } from '../e2e/serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const site = path.resolve(process.env.SBP_SITE || path.join(repo, 'dist'));
const snippets = path.join(repo, 'docs/embedding');
const snippet = (name) => fs.readFileSync(path.join(snippets, name), 'utf8');
const MKDOCS = '1.6.1';
const MATERIAL = '9.8.2';
const started = Date.now();
// Setting up (packing, installing, bundling) failed: said as a failure, not as a stack alone.
process.on('uncaughtException', (e) => {
  console.log(`FAIL setting up (or outside a test): ${String(e.stderr || e.message || e).trim().split('\n').slice(0, 5).join('\n     ')}`);
  process.exit(1);
});
// Every wait below has its own time-out; this one bounds the whole run.
setTimeout(() => {
  console.log('FAIL the run took longer than 10 minutes');
  process.exit(1);
}, 10 * 60 * 1000).unref();

const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { encoding: 'utf8', timeout: 180000, stdio: ['ignore', 'pipe', 'pipe'], ...opts });

// This folder's own packages (esbuild, React, MDX, webpack, VitePress): installed from its lock
// file when one is missing.
const NEEDED = Object.keys(JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8')).devDependencies);
if (NEEDED.some((name) => !fs.existsSync(path.join(here, 'node_modules', name, 'package.json')))) {
  console.log('installing tests/package/node_modules (npm ci)');
  sh('npm', ['ci', '--no-audit', '--no-fund'], { cwd: here, stdio: 'inherit' });
}
const esbuild = await import('esbuild');
const { compile } = await import('@mdx-js/mdx');

// --- The package, as a user gets it -------------------------------------------------------

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sbp-npm-'));
const tgz = sh('node', [path.join(repo, 'packages/npm/pack.mjs'), site, path.join(tmp, 'out')]).trim().split('\n').pop();
const project = path.join(tmp, 'project');
fs.mkdirSync(project);
fs.writeFileSync(path.join(project, 'package.json'), '{ "name": "docs-site", "private": true }\n');
sh('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tgz], { cwd: project });
const installed = path.join(project, 'node_modules/service-bus-playground');

// The served tree. A site copies the package's element.js and site/ into its static files:
// the plain page's under /docs/playground/, Docusaurus's static/playground/ under /playground/.
const www = path.join(tmp, 'www');
function copyPackage(to) {
  fs.mkdirSync(to, { recursive: true });
  fs.copyFileSync(path.join(installed, 'element.js'), path.join(to, 'element.js'));
  fs.cpSync(path.join(installed, 'site'), path.join(to, 'site'), { recursive: true });
}
copyPackage(path.join(www, 'docs/playground'));
copyPackage(path.join(www, 'playground'));
fs.writeFileSync(path.join(www, 'favicon.ico'), '');

// First in every test page's head: counts the page's `message` listeners (added minus
// removed), so that a test can see the element let go of its own.
const COUNTER = `<script>
(() => {
  window.__listeners = 0;
  const add = window.addEventListener, remove = window.removeEventListener;
  window.addEventListener = function (type, ...rest) { if (type === 'message') window.__listeners++; return add.call(this, type, ...rest); };
  window.removeEventListener = function (type, ...rest) { if (type === 'message') window.__listeners--; return remove.call(this, type, ...rest); };
})();
</script>`;
const pageHtml = (head, body) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Message expiration</title>
${COUNTER}
${head}
</head>
<body>
${body}
</body>
</html>
`;

// A plain page at a sub-path, with both snippets; the element's script is loaded a second
// time from another address (a second module), which must not define the element again.
fs.mkdirSync(path.join(www, 'docs/guide'), { recursive: true });
fs.writeFileSync(path.join(www, 'docs/guide/ttl.html'), pageHtml('', `<main>
<h1>Message expiration</h1>
<p>A message's TimeToLive ends at its ExpiresAt.</p>
${snippet('page.html')}
<p>A plain frame:</p>
${snippet('iframe.html')}
<script type="module" src="/docs/playground/element.js?again"></script>
</main>`));
// A page on another origin that claims a size: the frame of an element is sent there.
fs.writeFileSync(path.join(www, 'claim.html'), pageHtml('', `<script>setInterval(() => parent.postMessage({ type: 'sbp-size', height: 777 }, '*'), 50);</script>`));

// The React app, bundled as a site's bundler does (the package from the project's
// node_modules, React from this folder's).
const build = path.join(tmp, 'build');
fs.cpSync(path.join(here, 'element'), build, { recursive: true });
const bundle = (entry, outfile, extra = {}) => esbuild.build({
  entryPoints: [path.join(build, entry)],
  outfile,
  bundle: true,
  format: 'esm',
  jsx: 'automatic',
  nodePaths: [path.join(project, 'node_modules'), path.join(here, 'node_modules')],
  define: { 'process.env.NODE_ENV': '"development"' },
  logLevel: 'error',
  ...extra,
});
await bundle('react-app.jsx', path.join(www, 'react/app.js'));
fs.writeFileSync(path.join(www, 'react/index.html'), pageHtml('', '<div id="root"></div>\n<script type="module" src="/react/app.js"></script>'));

// The MDX page as Docusaurus makes it: compiled, rendered on the server into the page's HTML,
// the config's `scripts` in the head (Docusaurus writes each as a <script> tag there), then
// hydrated by the client bundle.
fs.writeFileSync(path.join(build, 'docusaurus.mdx.js'), String(await compile(snippet('docusaurus.mdx'), { jsxImportSource: 'react' })));
await bundle('mdx-server.jsx', path.join(build, 'server.cjs'), { platform: 'node', format: 'cjs', define: { 'process.env.NODE_ENV': '"production"' } });
await bundle('mdx-client.jsx', path.join(www, 'mdx/app.js'));
fs.copyFileSync(path.join(snippets, 'docusaurus.config.js'), path.join(build, 'docusaurus.config.mjs'));
const config = (await import(pathToFileURL(path.join(build, 'docusaurus.config.mjs')))).default;
const attr = (v) => String(v).replace(/&/g, '&amp;').replace(/"/g, '&quot;');
const scriptTags = config.scripts.map((s) => (typeof s === 'string' ? { src: s } : s)).map((s) => `<script ${Object.entries(s)
  .map(([k, v]) => (v === true ? k : `${k}="${attr(v)}"`)).join(' ')}></script>`).join('\n');
const serverHtml = createRequire(import.meta.url)(path.join(build, 'server.cjs')).render();
fs.writeFileSync(path.join(www, 'mdx/index.html'), pageHtml(scriptTags, `<div id="root">${serverHtml}</div>\n<script type="module" src="/mdx/app.js"></script>`));

const { server, url } = await serve(www);
// The same server under another name is another origin.
const otherOrigin = url.replace('127.0.0.1', 'localhost');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: CHROMIUM_ARGS });

// --- Helpers -------------------------------------------------------------------------------

// What went wrong on a page: responses >= 400, failed requests (not those cut off because a
// frame was removed or navigated away), uncaught errors.
function watch(page) {
  const seen = { bad: [], errors: [], console: [] };
  page.on('response', (r) => { if (r.status() >= 400) seen.bad.push(`${r.status()} ${r.url()}`); });
  page.on('requestfailed', (r) => {
    const why = r.failure()?.errorText || '';
    if (!why.includes('ERR_ABORTED')) seen.bad.push(`${why} ${r.url()}`);
  });
  page.on('pageerror', (e) => seen.errors.push(String(e.message || e)));
  page.on('console', (m) => { if (m.type() === 'error') seen.console.push(m.text()); });
  return seen;
}
function clean(seen) {
  if (seen.bad.length) throw new Error(`failed requests: ${seen.bad.slice(0, 5).join('; ')}`);
  if (seen.errors.length) throw new Error(`page errors: ${seen.errors.slice(0, 3).join('; ')}`);
}
// The frame inside the element (its shadow root) matched by `host`.
const frameOf = (page, host) => page.evaluate((h) => {
  const f = document.querySelector(h)?.shadowRoot?.querySelector('iframe');
  return f ? { src: f.src, height: f.style.height, title: f.title } : null;
}, host);
// The playground in that frame has run: its clock and a lane are on screen.
async function plays(page, frameSelector) {
  const frame = page.frameLocator(frameSelector);
  await frame.locator('.clock').waitFor({ timeout: 30000 });
  await frame.locator('.lane').first().waitFor({ timeout: 15000 });
}
// The element's frame has taken a height the playground reported: the element marks its frame
// data-reported then. (The reported height may happen to equal the initial one.)
async function sized(page, host) {
  await page.waitForFunction((h) => {
    const f = document.querySelector(h)?.shadowRoot?.querySelector('iframe');
    return f?.dataset.reported === '1' && /^\d+px$/.test(f.style.height);
  }, host, { timeout: 15000 });
}
const listeners = (page) => page.evaluate(() => window.__listeners);
// The query of `src`, its parameters in name order.
function query(src) {
  return Object.fromEntries([...new URL(src).searchParams].sort(([a], [b]) => a.localeCompare(b)));
}
const sorted = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
function expectEqual(what, got, want) {
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

// --- Tests ---------------------------------------------------------------------------------

test('the tarball holds element.js, its types, site/, README.md and LICENSE, with the workspace version; it imports where there is no DOM', async () => {
  const files = sh('tar', ['tzf', tgz]).trim().split('\n');
  for (const f of ['package/element.js', 'package/element.d.ts', 'package/react.d.ts', 'package/README.md', 'package/LICENSE', 'package/package.json', 'package/site/index.html', 'package/site/embed.js']) {
    if (!files.includes(f)) throw new Error(`the tarball lacks ${f}`);
  }
  const stray = files.filter((f) => !/^package\/(element\.js|element\.d\.ts|react\.d\.ts|README\.md|LICENSE|package\.json|site\/.+)$/.test(f));
  if (stray.length) throw new Error(`the tarball holds more: ${stray.join(', ')}`);
  if (!files.some((f) => f.endsWith('.wasm'))) throw new Error('the tarball has no wasm');
  const cargo = /\[workspace\.package\][^[]*?^version\s*=\s*"([^"]+)"/m.exec(fs.readFileSync(path.join(repo, 'Cargo.toml'), 'utf8'))[1];
  const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'));
  expectEqual('version', manifest.version, cargo);
  expectEqual('name and license', [manifest.name, manifest.license], ['service-bus-playground', 'MIT']);
  // A server rendering the page (Docusaurus, VitePress) imports the module: it must not fail
  // there, and the package's own files resolve through its exports.
  const out = sh('node', ['--input-type=module', '-e',
    "await import('service-bus-playground'); const { createRequire } = await import('node:module'); console.log(createRequire(process.cwd() + '/').resolve('service-bus-playground/site/index.html'))"], { cwd: project });
  if (!out.trim().endsWith(path.join('service-bus-playground', 'site', 'index.html'))) throw new Error(`site/index.html resolves to ${out}`);
});

test('a plain page at /docs/guide/: the element loads the site beside its script at /docs/playground/, plays and sizes itself; so does the iframe with embed.js', async (ctx) => {
  const page = await ctx.newPage();
  const seen = watch(page);
  const again = page.waitForResponse((r) => r.url().endsWith('/docs/playground/element.js?again'), { timeout: 15000 });
  await page.goto(url + 'docs/guide/ttl.html');
  await again;
  const frame = await frameOf(page, 'service-bus-playground');
  if (!frame || !frame.src.startsWith(`${url}docs/playground/site/index.html?`)) throw new Error(`frame: ${JSON.stringify(frame)}`);
  expectEqual('query', query(frame.src), sorted({ embed: '1', preset: 'ttl-expiry-to-dlq', panels: 'lanes,log', autoplay: '1' }));
  expectEqual('title', frame.title, 'Service Bus Playground');
  await plays(page, 'service-bus-playground iframe');
  await sized(page, 'service-bus-playground');
  // The plain iframe, sized by embed.js.
  await plays(page, 'iframe[width="100%"]');
  await page.waitForFunction(() => document.querySelector('main > iframe').style.height !== '', null, { timeout: 15000 });
  expectEqual('elements on the page', await page.evaluate(() => document.querySelectorAll('service-bus-playground').length), 1);
  clean(seen);
});

test('a changed attribute makes a new frame for it and no history entry; instant and speed go to the query as at= and speed=', async (ctx) => {
  const page = await ctx.newPage();
  const seen = watch(page);
  await page.goto(url + 'docs/guide/ttl.html');
  await plays(page, 'service-bus-playground iframe');
  const history = await page.evaluate(() => history.length);
  await page.evaluate(() => document.querySelector('service-bus-playground').setAttribute('lang', 'de'));
  await page.waitForFunction(() => document.querySelector('service-bus-playground').shadowRoot.querySelector('iframe').src.includes('lang=de'), null, { timeout: 5000 });
  await page.frameLocator('service-bus-playground iframe').locator('html[lang="de"] .clock').waitFor({ timeout: 30000 });
  // A share link (the one web/embed-demo.html embeds): only its fragment is taken.
  const link = /#(s=1z[A-Za-z0-9_\-]+&x=10)"/.exec(fs.readFileSync(path.join(site, 'embed-demo.html'), 'utf8'))[1];
  await page.evaluate((l) => {
    const el = document.querySelector('service-bus-playground');
    el.setAttribute('scenario', `https://somewhere.example/playground/?embed=1#${l}`);
    el.setAttribute('instant', '90s');
    el.setAttribute('speed', '10');
    el.removeAttribute('preset');
  }, link);
  await page.waitForFunction((l) => document.querySelector('service-bus-playground').shadowRoot.querySelector('iframe').src.endsWith(`#${l}`), link, { timeout: 5000 });
  const frame = await frameOf(page, 'service-bus-playground');
  expectEqual('query', query(frame.src), sorted({ embed: '1', panels: 'lanes,log', lang: 'de', at: '90s', speed: '10', autoplay: '1' }));
  await page.frameLocator('service-bus-playground iframe').locator('.lane[data-entity="orders"]').waitFor({ timeout: 30000 });
  if (await page.frameLocator('service-bus-playground iframe').locator('#error-banner').count()) throw new Error('the playground refused the share link');
  expectEqual('one frame in the element', await page.evaluate(() => document.querySelector('service-bus-playground').shadowRoot.querySelectorAll('iframe').length), 1);
  expectEqual('history entries', await page.evaluate(() => history.length), history);
  clean(seen);
});

test('instant and speed: the playground opens the preset at that instant and speed (?at= and ?speed=)', async (ctx) => {
  const page = await ctx.newPage();
  const seen = watch(page);
  await page.goto(url + 'docs/guide/ttl.html');
  await page.evaluate(() => {
    const el = document.createElement('service-bus-playground');
    el.id = 'later';
    for (const [k, v] of [['preset', 'ttl-expiry-to-dlq'], ['instant', '90s'], ['speed', '10'], ['lang', 'en']]) el.setAttribute(k, v);
    document.querySelector('main').prepend(el);
  });
  const frame = page.frameLocator('#later iframe');
  await frame.locator('#clock-rel', { hasText: 't=1m 30s' }).waitFor({ timeout: 30000 });
  expectEqual('speed', await frame.locator('#speed').inputValue({ timeout: 5000 }), '10');
  clean(seen);
});

test('inserted after the page loaded, the element plays; removed, it lets go of its message listener', async (ctx) => {
  const page = await ctx.newPage();
  const seen = watch(page);
  await page.goto(url + 'docs/guide/ttl.html');
  await plays(page, 'service-bus-playground iframe');
  const before = await listeners(page);
  // The frame is there, at the height asked for, as soon as the element is in the page.
  const initial = await page.evaluate(() => {
    const el = document.createElement('service-bus-playground');
    el.id = 'late';
    el.setAttribute('lesson', 'max-delivery-count');
    el.setAttribute('height', '250');
    document.querySelector('main').append(el);
    return el.shadowRoot.querySelector('iframe').style.height;
  });
  expectEqual('initial height', initial, '250px');
  expectEqual('listeners with it', await listeners(page), before + 1);
  await page.frameLocator('#late iframe').locator('#lesson-title').waitFor({ timeout: 30000 });
  await sized(page, '#late');
  // The height it takes is the playground's: its body's height (the frame is on this origin),
  // no longer the 250 px asked for.
  await page.waitForFunction(() => {
    const f = document.getElementById('late').shadowRoot.querySelector('iframe');
    const body = Math.ceil(f.contentDocument.body.getBoundingClientRect().height);
    return f.style.height !== '250px' && Math.abs(parseInt(f.style.height, 10) - body) <= 2;
  }, null, { timeout: 15000 });
  await page.evaluate(() => document.getElementById('late').remove());
  expectEqual('listeners without it', await listeners(page), before);
  clean(seen);
});

test('size reports count only from its own frame, from the frame\'s origin and within bounds (one site on this origin, one on another)', async (ctx) => {
  const page = await ctx.newPage();
  const seen = watch(page);
  await page.goto(url + 'docs/guide/ttl.html');
  // #near: the site on the page's origin (beside the script); #far: on another origin.
  await page.evaluate((farSite) => {
    for (const [id, siteUrl] of [['near', ''], ['far', farSite]]) {
      const el = document.createElement('service-bus-playground');
      el.id = id;
      if (siteUrl) el.setAttribute('site', siteUrl);
      el.setAttribute('preset', 'ttl-expiry-to-dlq');
      el.setAttribute('height', '300');
      document.querySelector('main').prepend(el);
    }
  }, `${otherOrigin}docs/playground/site/`);
  for (const id of ['near', 'far']) {
    await plays(page, `#${id} iframe`);
    await sized(page, `#${id}`);
  }
  const frameFor = async (id) => {
    const src = (await frameOf(page, `#${id}`)).src;
    return page.frames().find((f) => f.url() === src);
  };
  const near = await frameFor('near');
  const far = await frameFor('far');
  if (!near || !far || !far.url().startsWith(otherOrigin)) throw new Error('the two frames are not there');
  // The playgrounds' own reports are stilled first: their bodies get a fixed height.
  for (const f of [near, far]) await f.evaluate(() => { document.body.style.height = '400px'; document.body.style.overflow = 'hidden'; });
  await page.waitForTimeout(300);
  const heights = async () => [(await frameOf(page, '#near')).height, (await frameOf(page, '#far')).height];
  const before = await heights();
  const send = async (from, data) => {
    if (from === 'near' || from === 'far') await (from === 'near' ? near : far).evaluate((d) => window.parent.postMessage(d, '*'), data);
    else if (from === 'page') await page.evaluate((d) => window.postMessage(d, '*'), data);
    else {
      // Another frame on the page (same origin as the page and as #near's site).
      await page.evaluate((d) => {
        const other = document.createElement('iframe');
        document.body.append(other);
        other.contentWindow.eval(`parent.postMessage(${JSON.stringify(d)}, '*')`);
        setTimeout(() => other.remove(), 100);
      }, data);
    }
    await page.waitForTimeout(150);
    const now = await heights();
    if (JSON.stringify(now) !== JSON.stringify(before)) throw new Error(`${from} ${JSON.stringify(data)} resized a frame: ${now}`);
  };
  await send('page', { type: 'sbp-size', height: 333 });
  await send('another frame', { type: 'sbp-size', height: 334 });
  for (const from of ['near', 'far']) {
    await send(from, { type: 'sbp-size', height: 1e9 });
    await send(from, { type: 'sbp-size', height: 50 });
    await send(from, { type: 'sbp-size', height: -5 });
    await send(from, { type: 'sbp-size', height: '700' });
    await send(from, { type: 'sbp-size', height: Infinity });
    await send(from, { type: 'sbp-size', height: null });
    await send(from, { type: 'other', height: 555 });
  }
  // A report within bounds from its own frame is taken, by that element alone.
  await far.evaluate(() => window.parent.postMessage({ type: 'sbp-size', height: 432 }, '*'));
  await page.waitForFunction(() => document.getElementById('far').shadowRoot.querySelector('iframe').style.height === '432px', null, { timeout: 5000 });
  expectEqual('heights after #far\'s report', await heights(), [before[0], '432px']);
  // #far's frame goes to a page on this page's origin (not the frame's), which claims 777 px
  // every 50 ms: the same window, another origin.
  await far.evaluate((u) => { location.href = u; }, `${url}claim.html`);
  await page.waitForTimeout(800);
  expectEqual('heights after the claims', await heights(), [before[0], '432px']);
  clean(seen);
});

test('markup and quotes in every attribute inject nothing; a javascript: or data: site makes no frame', async (ctx) => {
  const page = await ctx.newPage();
  const seen = watch(page);
  const requested = [];
  page.on('request', (r) => requested.push(r.url()));
  await page.goto(url + 'docs/guide/ttl.html');
  await plays(page, 'service-bus-playground iframe');
  const NASTY = `"><img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'&x=1#y`;
  const names = ['preset', 'lesson', 'scenario', 'instant', 'speed', 'panels', 'lang', 'label', 'height', 'loading', 'autoplay', 'loop'];
  await page.evaluate(([nasty, names]) => {
    const el = document.createElement('service-bus-playground');
    el.id = 'nasty';
    for (const n of names) el.setAttribute(n, nasty);
    el.setAttribute('site', '/docs/playground/site/');
    document.querySelector('main').append(el);
  }, [NASTY, names]);
  const frame = await frameOf(page, '#nasty');
  const q = query(frame.src);
  for (const [attribute, parameter] of [['preset', 'preset'], ['lesson', 'lesson'], ['instant', 'at'], ['speed', 'speed'], ['panels', 'panels'], ['lang', 'lang']]) {
    expectEqual(`${attribute} round trip`, q[parameter], NASTY);
  }
  expectEqual('flags', [q.autoplay, q.loop], ['1', '1']);
  expectEqual('scenario: the part after its first #', decodeURIComponent(new URL(frame.src).hash.slice(1)), 'y');
  expectEqual('title and height', [frame.title, frame.height], [NASTY, '480px']);
  const inside = await page.evaluate(() => [...document.getElementById('nasty').shadowRoot.children].map((c) => c.localName));
  expectEqual('the element\'s shadow root', inside, ['style', 'iframe']);
  await page.frameLocator('#nasty iframe').locator('.clock').waitFor({ timeout: 30000 });
  await page.waitForTimeout(500);
  for (const [attribute, value] of [['site', 'javascript:window.__pwned=3'], ['site', 'data:text/html,<script>parent.__pwned=4</script>'], ['src', ' javascript:window.__pwned=5']]) {
    const kids = await page.evaluate(([a, v]) => {
      const el = document.createElement('service-bus-playground');
      el.setAttribute(a, v);
      document.querySelector('main').append(el);
      return [...el.shadowRoot.children].map((c) => c.localName);
    }, [attribute, value]);
    expectEqual(`the shadow root for ${attribute}=${value}`, kids, ['style', 'p']);
  }
  await page.waitForTimeout(300);
  const pwned = await page.evaluate(() => [window.__pwned, document.querySelectorAll('img').length]);
  expectEqual('top page: __pwned and images', pwned, [undefined, 0]);
  const framePwned = await page.frames().find((f) => f.url().includes('#y') || f.url().includes('%3Cimg'))?.evaluate(() => [window.__pwned, document.querySelectorAll('img').length]);
  expectEqual('frame: __pwned and images', framePwned, [undefined, 0]);
  const stray = requested.filter((r) => /\/x$/.test(new URL(r).pathname) || r.startsWith('data:'));
  if (stray.length) throw new Error(`requests from injected markup: ${stray.join(', ')}`);
  if (seen.errors.length) throw new Error(`page errors: ${seen.errors.join('; ')}`);
});

test('TypeScript: a TSX page with the element type-checks with React 19\'s types (service-bus-playground/react); a wrong attribute type is an error', async () => {
  const dir = path.join(project, 'tsx');
  fs.mkdirSync(dir, { recursive: true });
  // React's types, from this test's own dependencies, where the project's resolution finds them.
  const types = path.join(project, 'node_modules/@types');
  if (!fs.existsSync(types)) fs.symlinkSync(path.join(here, 'node_modules/@types'), types);
  const config = (files) => JSON.stringify({
    compilerOptions: { strict: true, jsx: 'react-jsx', module: 'esnext', moduleResolution: 'bundler', target: 'es2022', lib: ['es2022', 'dom'], noEmit: true, types: [] },
    files,
  });
  fs.writeFileSync(path.join(dir, 'page.tsx'), `import 'service-bus-playground';
import type {} from 'service-bus-playground/react';
export const Page = () => <service-bus-playground preset="ttl-expiry-to-dlq" autoplay height={300} site="/playground/site/" />;
export const element: HTMLElement = document.createElement('service-bus-playground');
`);
  fs.writeFileSync(path.join(dir, 'wrong.tsx'), `import type {} from 'service-bus-playground/react';
export const Wrong = () => <service-bus-playground loading="soon" />;
`);
  const tsc = path.join(here, 'node_modules/typescript/bin/tsc');
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), config(['page.tsx']));
  sh('node', [tsc, '-p', dir]);
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), config(['wrong.tsx']));
  let said = '';
  try {
    sh('node', [tsc, '-p', dir]);
  } catch (e) {
    said = String(e.stdout || '') + String(e.message || '');
  }
  if (!/TS2322/.test(said) || !said.includes('soon')) throw new Error(`tsc took loading="soon": ${said}`);
});

test('React: rendered by a React app (the package bundled), the element plays; navigating away and back unmounts and remounts it; a changed prop makes a new frame', async (ctx) => {
  const page = await ctx.newPage();
  const seen = watch(page);
  await page.goto(url + 'react/');
  await plays(page, '#pg iframe');
  await sized(page, '#pg');
  const frame = await frameOf(page, '#pg');
  expectEqual('query', query(frame.src), sorted({ embed: '1', preset: 'ttl-expiry-to-dlq', panels: 'lanes,log', lang: 'en', autoplay: '1' }));
  if (!frame.src.startsWith(`${url}docs/playground/site/index.html?`)) throw new Error(`frame: ${frame.src}`);
  const withIt = await listeners(page);
  await page.click('#nav-other');
  await page.locator('#other').waitFor({ timeout: 5000 });
  expectEqual('elements on the other page', await page.locator('service-bus-playground').count(), 0);
  expectEqual('listeners on the other page', await listeners(page), withIt - 1);
  await page.goBack();
  await page.locator('#pg').waitFor({ timeout: 5000 });
  await plays(page, '#pg iframe');
  await sized(page, '#pg');
  expectEqual('listeners back on the playground page', await listeners(page), withIt);
  await page.click('#to-de');
  await page.frameLocator('#pg iframe').locator('html[lang="de"] .clock').waitFor({ timeout: 30000 });
  expectEqual('frames in the element', await page.evaluate(() => document.getElementById('pg').shadowRoot.querySelectorAll('iframe').length), 1);
  clean(seen);
  const react = seen.console.filter((m) => /react|warning/i.test(m));
  if (react.length) throw new Error(`React said: ${react.slice(0, 2).join('; ')}`);
});

test('MDX for Docusaurus (docs/embedding/docusaurus.mdx, the config\'s scripts in the head): rendered on the server, hydrated without a mismatch, playing after client-side navigation away and back', async (ctx) => {
  const page = await ctx.newPage();
  const seen = watch(page);
  const response = await page.goto(url + 'mdx/');
  const html = await response.text();
  for (const part of ['<service-bus-playground preset="ttl-expiry-to-dlq" autoplay="" panels="lanes,log" height="420">', 'style="width:100%;border:0"']) {
    if (!html.includes(part)) throw new Error(`the server's HTML lacks ${part}`);
  }
  const element = 'main service-bus-playground';
  const plain = 'iframe[src*="lapsed-locks-to-dlq"]';
  const check = async () => {
    await plays(page, `${element} iframe`);
    await sized(page, element);
    const frame = await frameOf(page, element);
    if (!frame.src.startsWith(`${url}playground/site/index.html?`)) throw new Error(`frame: ${frame.src}`);
    await plays(page, plain);
    await page.waitForFunction((s) => document.querySelector(s).style.height !== '', plain, { timeout: 15000 });
  };
  await check();
  const withIt = await listeners(page);
  await page.click('#nav-other');
  await page.locator('#other').waitFor({ timeout: 5000 });
  expectEqual('listeners on the other page', await listeners(page), withIt - 1);
  await page.goBack();
  await check();
  expectEqual('listeners back', await listeners(page), withIt);
  expectEqual('recoverable (hydration) errors', await page.evaluate(() => window.__recoverable), []);
  clean(seen);
  const react = seen.console.filter((m) => /hydrat|react|warning/i.test(m));
  if (react.length) throw new Error(`React said: ${react.slice(0, 2).join('; ')}`);
});

// MkDocs and Material for MkDocs in a venv of their own, kept between runs (in the system's
// temporary folder, named by their versions); the tests that need them are skipped, and say
// why, when it cannot be made.
let venvMade = null;
function mkdocsVenv() {
  venvMade ??= (() => {
    const venv = path.join(os.tmpdir(), `sbp-mkdocs-${MKDOCS}-material-${MATERIAL}`);
    if (fs.existsSync(path.join(venv, 'bin/mkdocs'))) return { venv };
    try {
      fs.rmSync(venv, { recursive: true, force: true });
      sh('python3', ['-m', 'venv', venv], { timeout: 60000 });
      sh(path.join(venv, 'bin/pip'), ['install', '-q', `mkdocs==${MKDOCS}`, `mkdocs-material==${MATERIAL}`], { timeout: 300000 });
      return { venv };
    } catch (e) {
      fs.rmSync(venv, { recursive: true, force: true });
      return { why: `no venv with mkdocs ${MKDOCS} and mkdocs-material ${MATERIAL} could be made: ${String(e.stderr || e.message).trim().split('\n').pop()}` };
    }
  })();
  if (venvMade.why) throw new Skip(venvMade.why);
  return path.join(venvMade.venv, 'bin/mkdocs');
}

// A MkDocs project with `theme` (YAML) and the snippets: a home page linking to a guide page
// that holds the element; built into www/<name>/.
function mkdocsSite(name, theme) {
  const mkdocs = mkdocsVenv();
  const dir = path.join(tmp, name);
  fs.mkdirSync(path.join(dir, 'docs/guide'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'mkdocs.yml'), `site_name: Playground test\nsite_url: ${url}${name}/\nsite_dir: ${path.join(www, name)}\n${theme}${snippet('mkdocs.yml')}`);
  fs.writeFileSync(path.join(dir, 'docs/index.md'), '# Home\n\n[Message expiration](guide/ttl.md)\n');
  fs.writeFileSync(path.join(dir, 'docs/guide/ttl.md'), `# Message expiration\n\nA message's TimeToLive ends at its ExpiresAt. [Home](../index.md)\n\n${snippet('markdown.md')}\nMore text.\n`);
  copyPackage(path.join(dir, 'docs/playground'));
  sh(mkdocs, ['build', '-q'], { cwd: dir, timeout: 120000 });
}

// A page of a built MkDocs site: only this site's requests go out (the themes' links to other
// hosts, fonts and CDNs, are cut: there is no internet here, and they are not the package's).
async function mkdocsPage(ctx, where) {
  const page = await ctx.newPage();
  const seen = watch(page);
  await page.route((u) => !u.href.startsWith(url), (r) => r.abort());
  await page.goto(url + where);
  return { page, seen };
}

test('MkDocs: docs/embedding/mkdocs.yml and markdown.md in a site MkDocs built, served at /mkdocs/', async (ctx) => {
  // The default theme takes highlight.js from a CDN, out of reach here (and its page script
  // fails without it): it is turned off. The rest is the snippet.
  mkdocsSite('mkdocs', 'theme:\n  name: mkdocs\n  highlightjs: false\n');
  const { page, seen } = await mkdocsPage(ctx, 'mkdocs/guide/ttl/');
  await plays(page, 'service-bus-playground iframe');
  await sized(page, 'service-bus-playground');
  const frame = await frameOf(page, 'service-bus-playground');
  if (!frame.src.startsWith(`${url}mkdocs/playground/site/index.html?`)) throw new Error(`frame: ${frame.src}`);
  seen.bad = seen.bad.filter((b) => b.includes(url));
  clean(seen);
});

test('Material for MkDocs with instant navigation: the element plays on the page, and again after navigating away and back without a reload', async (ctx) => {
  mkdocsSite('material', 'theme:\n  name: material\n  font: false\n  features:\n    - navigation.instant\n');
  const { page, seen } = await mkdocsPage(ctx, 'material/guide/ttl/');
  await plays(page, 'service-bus-playground iframe');
  await sized(page, 'service-bus-playground');
  // A mark on the window: it survives only navigations that do not reload the page.
  await page.evaluate(() => { window.__sameDocument = true; });
  const withIt = await listeners(page);
  await page.locator('article a', { hasText: 'Home' }).click();
  await page.locator('article a', { hasText: 'Message expiration' }).waitFor({ timeout: 10000 });
  expectEqual('elements on the home page', await page.locator('service-bus-playground').count(), 0);
  await page.locator('article a', { hasText: 'Message expiration' }).click();
  await plays(page, 'service-bus-playground iframe');
  await sized(page, 'service-bus-playground');
  expectEqual('the same document (instant navigation)', await page.evaluate(() => window.__sameDocument), true);
  expectEqual('listeners back on the page', await listeners(page), withIt);
  seen.bad = seen.bad.filter((b) => b.includes(url));
  clean(seen);
});

test('webpack (which bundles a Docusaurus client module): the package bundles without a warning; an element without `site` asks for it, one with `site` plays', async (ctx) => {
  const webpack = (await import('webpack')).default;
  fs.writeFileSync(path.join(build, 'webpack-entry.js'), "import 'service-bus-playground';\n");
  const stats = await new Promise((resolve, reject) => webpack({
    mode: 'production',
    context: build,
    entry: './webpack-entry.js',
    output: { path: path.join(www, 'webpack'), filename: 'app.js' },
    resolve: { modules: [path.join(project, 'node_modules')] },
  }, (err, result) => (err ? reject(err) : resolve(result))));
  const { warnings, errors } = stats.toJson({ all: false, warnings: true, errors: true });
  if (errors.length || warnings.length) throw new Error(`webpack: ${[...errors, ...warnings].map((w) => w.message).join('; ').slice(0, 300)}`);
  fs.writeFileSync(path.join(www, 'webpack/index.html'), pageHtml('<script src="/webpack/app.js" defer></script>', `<main>
<service-bus-playground id="nosite" preset="ttl-expiry-to-dlq"></service-bus-playground>
<service-bus-playground id="withsite" site="/playground/site/" preset="ttl-expiry-to-dlq" height="300"></service-bus-playground>
</main>`));
  const page = await ctx.newPage();
  const seen = watch(page);
  await page.goto(url + 'webpack/');
  await plays(page, '#withsite iframe');
  await sized(page, '#withsite');
  const note = await page.evaluate(() => [...document.getElementById('nosite').shadowRoot.children].map((c) => c.localName + (c.localName === 'p' ? `: ${c.textContent}` : '')));
  if (note.length !== 2 || !note[1].includes('set its site attribute')) throw new Error(`the element without site: ${JSON.stringify(note)}`);
  clean(seen);
});

test('VitePress: docs/embedding/vitepress.config.mjs and markdown.md in a site VitePress built; the element plays after client-side navigation away and back', async (ctx) => {
  // The snippet is the whole config; the element's files are in public/playground/, which
  // VitePress copies to the site's root.
  const dir = path.join(tmp, 'vitepress');
  fs.mkdirSync(path.join(dir, '.vitepress'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'guide'));
  fs.copyFileSync(path.join(snippets, 'vitepress.config.mjs'), path.join(dir, '.vitepress/config.mjs'));
  fs.writeFileSync(path.join(dir, 'index.md'), '# Home\n\n[Message expiration](./guide/ttl)\n');
  fs.writeFileSync(path.join(dir, 'guide/ttl.md'), `# Message expiration\n\nA message's TimeToLive ends at its ExpiresAt. [Home](../)\n\n${snippet('markdown.md')}\nMore text.\n`);
  copyPackage(path.join(dir, 'public/playground'));
  // A VitePress project has VitePress (and Vue) in its node_modules: this folder's.
  fs.symlinkSync(path.join(here, 'node_modules'), path.join(dir, 'node_modules'));
  sh(path.join(here, 'node_modules/.bin/vitepress'), ['build', dir], { timeout: 180000 });
  // isCustomElement at work: the page's code makes the tag as an element with its attributes,
  // not as a component to look up by name (resolveComponent("service-bus-playground"), which
  // warns in development and is minified to a call with the name alone).
  const assets = path.join(dir, '.vitepress/dist/assets');
  const chunk = fs.readdirSync(assets).find((f) => /^guide_ttl\.md\.[^.]+\.js$/.test(f));
  const code = fs.readFileSync(path.join(assets, chunk), 'utf8');
  if (!code.includes('"service-bus-playground",{') || code.includes('("service-bus-playground")')) {
    throw new Error(`Vue did not take the tag for a custom element: ${/.{0,40}service-bus-playground.{0,40}/.exec(code)?.[0]}`);
  }
  // Its own server: the config has no `base`, so the site is at a server's root.
  const vp = await serve(path.join(dir, '.vitepress/dist'));
  try {
    const page = await ctx.newPage();
    const seen = watch(page);
    const response = await page.goto(vp.url + 'guide/ttl.html');
    const html = await response.text();
    for (const part of ['<script type="module" src="/playground/element.js"></script>', '<service-bus-playground preset="ttl-expiry-to-dlq" autoplay panels="lanes,log" height="420">']) {
      if (!html.includes(part)) throw new Error(`the built page lacks ${part}`);
    }
    await plays(page, 'service-bus-playground iframe');
    await sized(page, 'service-bus-playground');
    const frame = await frameOf(page, 'service-bus-playground');
    if (!frame.src.startsWith(`${vp.url}playground/site/index.html?`)) throw new Error(`frame: ${frame.src}`);
    await page.evaluate(() => { window.__sameDocument = true; });
    const withIt = await listeners(page);
    await page.locator('.vp-doc a', { hasText: 'Home' }).click();
    await page.locator('.vp-doc a', { hasText: 'Message expiration' }).waitFor({ timeout: 10000 });
    expectEqual('elements on the home page', await page.locator('service-bus-playground').count(), 0);
    await page.locator('.vp-doc a', { hasText: 'Message expiration' }).click();
    await plays(page, 'service-bus-playground iframe');
    await sized(page, 'service-bus-playground');
    expectEqual('the same document (client-side navigation)', await page.evaluate(() => window.__sameDocument), true);
    expectEqual('listeners back on the page', await listeners(page), withIt);
    clean(seen);
    const vue = seen.console.filter((m) => /hydrat|vue|warn/i.test(m));
    if (vue.length) throw new Error(`Vue said: ${vue.slice(0, 2).join('; ')}`);
  } finally {
    vp.server.close();
  }
});

test('docs/EMBEDDING.md shows each snippet as it is tried here', async () => {
  const doc = fs.readFileSync(path.join(repo, 'docs/EMBEDDING.md'), 'utf8');
  for (const name of fs.readdirSync(snippets)) {
    if (!doc.includes(snippet(name).trimEnd())) throw new Error(`docs/EMBEDDING.md does not show docs/embedding/${name} as it is`);
  }
});

// --- Run -----------------------------------------------------------------------------------

const { passed, failed, skipped } = await runTests(browser, tests, process.argv.slice(2).join(' '));
await browser.close();
server.close();
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`(${((Date.now() - started) / 1000).toFixed(0)} s)`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed ? 1 : 0);
