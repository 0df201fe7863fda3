// Minifies what the built app pages load before the app runs, with esbuild: the scripts and
// stylesheets they name with an `integrity` (wasm-bindgen's glue and snippets, trunk's
// stylesheets), whose hashes are then written anew, and the pages' inline scripts and styles.
// A page that names no such file is not an app's (embed-demo.html, an example to read) and stays
// as written.
// On a slow phone every byte before the wasm's last one delays the app (docs/PERFORMANCE.md).
// `node scripts/minify.mjs dist`, after scripts/first-screen.mjs (which fills an inline script
// and inlines the stylesheet) and before scripts/csp.mjs (the inline scripts' hashes change).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pages } from './pages.mjs';

// esbuild comes with the build's other npm tools (tests/e2e/package.json, scripts/setup.sh).
const { transformSync } = createRequire(new URL('../tests/e2e/package.json', import.meta.url))('esbuild');

const dist = path.resolve(process.argv[2] || 'dist');
// A link or script element naming a file with an integrity hash.
const NAMED = /<(?:link|script)\b[^>]*?\b(?:href|src)="([^"]+)"[^>]*>/g;
const INLINE_SCRIPT = /(<script(?![^>]*\bsrc=)([^>]*)>)([\s\S]*?)(<\/script>)/g;
const INLINE_STYLE = /(<style[^>]*>)([\s\S]*?)(<\/style>)/g;

// Minified text that still cannot end the element it is put in.
function minified(code, loader, format, where) {
  const out = transformSync(code, { loader, format, minify: true, legalComments: 'none' }).code.trimEnd();
  const end = loader === 'css' ? /<\/style/i : /<\/script|<!--/i;
  if (end.test(out)) throw new Error(`${where}: its minified text would end its element`);
  return out;
}

const done = new Set();
let before = 0, after = 0, apps = 0;
for (const page of pages(dist)) {
  let html = fs.readFileSync(page, 'utf8');
  if (!/\bintegrity="/.test(html)) continue;
  apps += 1;
  for (const [tag, href] of [...html.matchAll(NAMED)]) {
    if (!/\bintegrity="/.test(tag) || !/\.(js|css)$/.test(href)) continue;
    // A script is minified as a module (its top-level names its own) only where it is one.
    if (href.endsWith('.js') && !/\brel="modulepreload"|\btype="module"/.test(tag)) continue;
    const file = path.resolve(path.dirname(page), href);
    if (!file.startsWith(dist)) throw new Error(`${page}: ${href} is outside ${dist}`);
    if (!done.has(file)) {
      const code = fs.readFileSync(file, 'utf8');
      const css = file.endsWith('.css');
      const out = minified(code, css ? 'css' : 'js', css ? undefined : 'esm', file);
      fs.writeFileSync(file, out);
      before += code.length;
      after += out.length;
      done.add(file);
    }
    const hash = crypto.createHash('sha384').update(fs.readFileSync(file)).digest('base64');
    html = html.replace(tag, () => tag.replace(/\bintegrity="[^"]*"/, `integrity="sha384-${hash}"`));
  }
  const length = html.length;
  html = html
    .replace(INLINE_SCRIPT, (_, open, attrs, code, close) => {
      const type = /\btype="([^"]*)"/.exec(attrs)?.[1] ?? 'text/javascript';
      if (!code.trim() || !['text/javascript', 'module'].includes(type)) return open + code + close;
      const module = type === 'module';
      return open + minified(code, 'js', module ? 'esm' : undefined, page) + close;
    })
    .replace(INLINE_STYLE, (_, open, code, close) => open + minified(code, 'css', undefined, page) + close);
  before += length;
  after += html.length;
  fs.writeFileSync(page, html);
}
console.log(`minified: ${done.size} files and ${apps} pages' inline scripts and styles, ${before} -> ${after} bytes`);
