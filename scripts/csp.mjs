// Puts a Content-Security-Policy into every page of dist/ (run by build-ui.sh after trunk):
// scripts only from the site itself and the page's own inline scripts, by their SHA-256 (trunk's
// wasm loader among them, whose text changes with every build, hence after the build);
// WebAssembly compiled ('wasm-unsafe-eval'); no plugins (object-src); no <base> (base-uri).
// Framing stays open: embedding the playground in documentation is a feature.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pages } from './pages.mjs';

const dist = path.resolve(process.argv[2] || 'dist');
const META = /<meta http-equiv="Content-Security-Policy"[^>]*>\n?/g;
const INLINE = /<script(?![^>]*\bsrc=)([^>]*)>([\s\S]*?)<\/script>/g;
// A data block (scripts/carry.mjs: a catalog, the lesson track, the wasm's head: any type but a
// script's) is never run: no hash for it.
const DATA = /\btype="(?!module"|text\/javascript")[^"]*"/;

export function policy(html) {
  const hashes = [...html.matchAll(INLINE)].filter((m) => !DATA.test(m[1])).map(
    (m) => `'sha256-${crypto.createHash('sha256').update(m[2], 'utf8').digest('base64')}'`,
  );
  return ["script-src 'self' 'wasm-unsafe-eval'", ...hashes].join(' ') + "; object-src 'none'; base-uri 'none'";
}

for (const file of pages(dist)) {
  const html = fs.readFileSync(file, 'utf8').replace(META, '');
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy(html)}">\n`;
  const charset = html.match(/<meta charset[^>]*>\n?/i);
  if (!charset) throw new Error(`${file}: no <meta charset> to put the policy after`);
  const end = charset.index + charset[0].length;
  fs.writeFileSync(file, html.slice(0, end) + meta + html.slice(end));
  console.log(`CSP: ${path.relative(dist, file)}`);
}
