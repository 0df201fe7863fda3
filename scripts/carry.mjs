// Makes the playground's page (dist/index.html) carry in itself what the app needs before its
// first frame, besides the wasm: the catalogs of every language and the lesson track as data
// blocks, and wasm-bindgen's glue with its snippets bundled into the page's module script.
// Why: on a slow phone each request waits a round trip (562.5 ms) before its first byte, and
// everything fetched beside the wasm shares the line with it, so each of those bytes delays the
// app (5.4 ms per KB). The page's own bytes after the wasm's preload arrive while the wasm's
// request waits for its first byte: that part of the line is otherwise idle (docs/PERFORMANCE.md).
// The wasm's preload goes first in the head, so that its request leaves on the page's first bytes.
// The app reads a data block where the page has it and fetches the file otherwise
// (browser::carried_or_fetched); the files stay in the site for the pages of their own.
// `node scripts/carry.mjs dist`, after scripts/minify.mjs and before scripts/csp.mjs (the module
// script's hash).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

// esbuild comes with the build's other npm tools (tests/e2e/package.json, scripts/setup.sh).
const { buildSync } = createRequire(new URL('../tests/e2e/package.json', import.meta.url))('esbuild');

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

// trunk's module script: it imports the glue and starts the wasm.
const MODULE = /<script type="module">([\s\S]*?)<\/script>\n?/;
const loader = MODULE.exec(html) || fail('no module script (trunk\'s loader)');
const bundled = buildSync({
  stdin: { contents: loader[1], resolveDir: dist, sourcefile: 'index.html', loader: 'js' },
  bundle: true,
  format: 'esm',
  minify: true,
  legalComments: 'none',
  write: false,
}).outputFiles[0].text.trimEnd();
carriable(bundled, 'the bundled glue');
html = html.replace(loader[0], '');
// The glue and snippets, now in the page, are no longer preloaded.
const preloads = [...html.matchAll(/<link rel="modulepreload"[^>]*>/g)];
if (!preloads.length) fail('no modulepreload of the glue');
for (const [tag] of preloads) html = html.replace(tag, '');
// The wasm's preload first in the head.
const wasm = /<link rel="preload" href="[^"]+\.wasm"[^>]*>/.exec(html) || fail('no preload of the wasm');
html = html.replace(wasm[0], '');
const viewport = /<meta name="viewport"[^>]*>/.exec(html) || fail('no viewport meta to put the preload after');
html = html.replace(viewport[0], () => `${viewport[0]}\n${wasm[0]}`);

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
html = html.replace('</body>', () => `${blocks.join('\n')}\n</body>`);
fs.writeFileSync(page, html);
console.log(`carried in ${page}: ${blocks.length - 2} catalogs, the lesson track, the glue bundled (${bundled.length} bytes)`);
