// Makes the playground's page (dist/index.html) carry in itself what the app needs before its
// first frame: the catalogs of every language and the lesson track as data blocks, wasm-bindgen's
// glue with its snippets bundled into the page's module script, and the wasm's first bytes.
// Why: on a slow phone each request waits a round trip (Lighthouse's mobile profile: 562.5 ms)
// before its first byte, and everything fetched beside the wasm shares the line with it, so each
// of those bytes delays the app (5.4 ms per KB at 1.47 Mbit/s). The page's own bytes after the
// wasm's preload arrive while the wasm's request waits for its first byte: that part of the line
// is otherwise idle (docs/PERFORMANCE.md). So the page fills it: the data blocks, then as much of
// the wasm's beginning as keeps the whole page within PAGE_BROTLI; the rest of the wasm is a file
// of its own (`<name>_bg.<hash>.rest.wasm`, preloaded first in the head), and the loader streams the two
// into one compilation. The whole wasm stays in the site, for a page without its data blocks.
// The app reads a data block where the page has it and fetches the file otherwise
// (browser::carried_or_fetched); the files stay in the site for the pages of their own.
// `node scripts/carry.mjs dist`, after scripts/minify.mjs and before scripts/csp.mjs (the module
// script's hash).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';

// esbuild comes with the build's other npm tools (tests/e2e/package.json, scripts/setup.sh).
const { buildSync } = createRequire(new URL('../tests/e2e/package.json', import.meta.url))('esbuild');

// The page, brotli-compressed, at most: the slow phone's line carries about 107 KB between the
// page's first byte and the wasm's (its request leaves on the page's first bytes, about 20 ms
// later, and waits a round trip); what is left is a margin for a slower start.
const PAGE_BROTLI = 96 * 1024 - 512; // less the policy scripts/csp.mjs puts in afterwards
const brotli = (text) => zlib.brotliCompressSync(Buffer.from(text), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

const dist = path.resolve(process.argv[2] || 'dist');
const page = path.join(dist, 'index.html');
let html = fs.readFileSync(page, 'utf8');
const fail = (what) => { throw new Error(`${page}: ${what}`); };
// Text inside a script element ends at `</script`, and `<!--` in it changes how the parser
// reads the rest: a text holding either cannot be carried as it is.
const carriable = (text, where) => {
  if (/<\/script|<!--/i.test(text)) throw new Error(`${where} holds </script or <!--, which a data block cannot carry`);
  return text;
};

// trunk's module script imports the glue and starts the wasm; the page's own starts it from the
// wasm's head (a data block) and the rest's request, or from the whole wasm where the page has no
// head (wasm-bindgen's init takes a Response and compiles it as it streams).
const MODULE = /<script type="module">([\s\S]*?)<\/script>\n?/;
const trunks = MODULE.exec(html) || fail('no module script (trunk\'s loader)');
const glue = /from\s*"(\.\/[\w.-]+\.js)"/.exec(trunks[1]) || fail('trunk\'s loader imports no glue');
const preload = /<link rel="preload" href="\.\/([\w.-]+_bg\.wasm)"[^>]*>/.exec(html) || fail('no preload of the wasm');
const whole = fs.readFileSync(path.join(dist, preload[1]));
// The rest is named after its own bytes: where the wasm is cut depends on the page (its
// catalogs, its stylesheet), not only on the wasm trunk names, and a cached rest of another cut
// must never be stitched to this page's head.
const sha384 = (bytes) => `sha384-${crypto.createHash('sha384').update(bytes).digest('base64')}`;
const restNameOf = (rest) => preload[1].replace(/\.wasm$/, `.${crypto.createHash('sha256').update(rest).digest('hex').slice(0, 16)}.rest.wasm`);
const loader = `
import init, * as bindings from ${JSON.stringify(glue[1])};
const WHOLE = ${JSON.stringify('./' + preload[1])};
function stitched(head) {
  const bytes = Uint8Array.from(atob(head.textContent), (c) => c.charCodeAt(0));
  const rest = fetch(head.dataset.rest);
  const body = new ReadableStream({
    async start(out) {
      out.enqueue(bytes);
      const answer = await rest;
      if (!answer.ok) throw new Error(answer.url + ': ' + answer.status);
      const reader = answer.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        out.enqueue(value);
      }
      out.close();
    },
  });
  return new Response(body, { headers: { 'Content-Type': 'application/wasm' } });
}
// Where the head and its rest do not make the wasm (the rest not found, or cut off), the whole.
const head = document.getElementById('wasm-head');
const whole = () => init({ module_or_path: WHOLE });
const wasm = await (head ? init({ module_or_path: stitched(head) }).catch(whole) : whole());
window.wasmBindings = bindings;
dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm } }));
`;
const bundled = buildSync({
  stdin: { contents: loader, resolveDir: dist, sourcefile: 'index.html', loader: 'js' },
  bundle: true,
  format: 'esm',
  minify: true,
  legalComments: 'none',
  write: false,
}).outputFiles[0].text.trimEnd();
carriable(bundled, 'the bundled glue');
html = html.replace(trunks[0], '');
// The glue and snippets, now in the page, are no longer preloaded.
const preloads = [...html.matchAll(/<link rel="modulepreload"[^>]*>/g)];
if (!preloads.length) fail('no modulepreload of the glue');
for (const [tag] of preloads) html = html.replace(tag, '');
html = html.replace(preload[0], '');

// The data blocks and the module script, at the end of the body: the welcome is painted before
// they arrive, and a module script runs once the page is read, so the app finds them all.
const blocks = [];
const catalogs = path.join(dist, 'i18n');
for (const file of fs.readdirSync(catalogs).filter((f) => f.endsWith('.ftl')).sort()) {
  const text = carriable(fs.readFileSync(path.join(catalogs, file), 'utf8'), path.join(catalogs, file));
  blocks.push(`<script type="text/plain" id="catalog-${path.basename(file, '.ftl')}">${text}</script>`);
}
const track = path.join(dist, 'lessons', 'index.json');
blocks.push(`<script type="application/json" id="lessons-index">${carriable(fs.readFileSync(track, 'utf8'), track)}</script>`);
blocks.push(`<script type="module">${bundled}</script>`);
if (!html.includes('</body>')) fail('no </body>');
const viewport = /<meta name="viewport"[^>]*>/.exec(html) || fail('no viewport meta to put the preload after');
// The page with the wasm's first `n` bytes, and the rest's preload first in its head (the same
// attributes as trunk's preload of the whole, so that the loader's request takes it up).
const pageWith = (n) => {
  const rest = whole.subarray(n);
  const name = restNameOf(rest);
  const link = `<link rel="preload" href="./${name}" crossorigin="anonymous" integrity="${sha384(rest)}" as="fetch" type="application/wasm">`;
  const head = `<script type="application/octet-stream" id="wasm-head" data-rest="./${name}">${whole.subarray(0, n).toString('base64')}</script>`;
  return html
    .replace(viewport[0], () => `${viewport[0]}\n${link}`)
    .replace('</body>', () => `${[...blocks.slice(0, -1), head, blocks[blocks.length - 1]].join('\n')}\n</body>`);
};
// The most whole KB of the wasm that keep the page within PAGE_BROTLI.
let lo = 0, hi = Math.floor(whole.length / 1024);
if (brotli(pageWith(0)) > PAGE_BROTLI) fail(`the page without the wasm's head is over ${PAGE_BROTLI} B brotli`);
while (lo < hi) {
  const mid = Math.ceil((lo + hi) / 2);
  if (brotli(pageWith(mid * 1024)) <= PAGE_BROTLI) lo = mid; else hi = mid - 1;
}
const n = lo * 1024;
const restName = restNameOf(whole.subarray(n));
fs.writeFileSync(path.join(dist, restName), whole.subarray(n));
html = pageWith(n);
fs.writeFileSync(page, html);
console.log(`carried in ${page}: ${blocks.length - 2} catalogs, the lesson track, the glue bundled, the wasm's first ${lo} KB (${restName} the rest); ${brotli(html)} B brotli`);
