// The HTML pages of a built site (dist/ and its folders), for the build's steps that rewrite
// every page (scripts/minify.mjs, scripts/csp.mjs).
import fs from 'node:fs';
import path from 'node:path';

export function pages(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return pages(p);
    return e.name.endsWith('.html') ? [p] : [];
  });
}
