// Writes the first visit's welcome texts into the built pages' inline script, from the
// catalogs (web/i18n/<lang>.ftl): the static first screen (index.html) says what the app's
// welcome says, in each language, without a second copy of the words in the repository.
// Then puts the stylesheet into the page itself: it arrives with the HTML, while the wasm's
// request is on its way, instead of as a request of its own sharing the line with the wasm
// (on a slow phone each request waits a round trip of its own before its first byte).
// `node scripts/first-screen.mjs dist`, after trunk and before scripts/csp.mjs (the script's
// hash changes).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const KEYS = ['app-title', 'welcome-title', 'welcome-what', 'start-first-lesson', 'open-sandbox', 'first-loading'];
const MARK = '/*FIRST-SCREEN-TEXTS*/{}';
const here = path.dirname(fileURLToPath(import.meta.url));
const catalogs = path.resolve(here, '../web/i18n');

const texts = {};
for (const file of fs.readdirSync(catalogs).filter((f) => f.endsWith('.ftl'))) {
  const lang = path.basename(file, '.ftl');
  texts[lang] = {};
  for (const line of fs.readFileSync(path.join(catalogs, file), 'utf8').split('\n')) {
    const m = /^([a-z0-9-]+) = (.*)$/.exec(line);
    if (m && KEYS.includes(m[1])) texts[lang][m[1]] = m[2];
  }
  const missing = KEYS.filter((k) => !(k in texts[lang]));
  if (missing.length) throw new Error(`${file}: no ${missing.join(', ')}`);
}
// As a script literal: `<` escaped, so no text can end the script element.
const literal = JSON.stringify(texts).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
const page = path.join(process.argv[2] || 'dist', 'index.html');
const html = fs.readFileSync(page, 'utf8');
if (!html.includes(MARK)) throw new Error(`${page}: no ${MARK} to fill`);
const sheet = /<link rel="stylesheet" href="\.\/(style-[0-9a-f]+\.css)"[^>]*>/.exec(html);
if (!sheet) throw new Error(`${page}: no stylesheet link to inline`);
const css = fs.readFileSync(path.join(path.dirname(page), sheet[1]), 'utf8');
if (/<\/style/i.test(css)) throw new Error(`${sheet[1]}: holds </style, which would end the inline element`);
// At the end of the head: after trunk's preloads of the wasm and its script, so their requests
// go out before the parser has read the stylesheet.
if (!html.includes('</head>')) throw new Error(`${page}: no </head> to put the stylesheet before`);
fs.writeFileSync(page, html.replace(MARK, () => literal).replace(sheet[0], '').replace('</head>', () => `<style>${css}</style>\n</head>`));
console.log(`first screen: ${Object.keys(texts).join(', ')} written into ${page}, ${sheet[1]} inlined`);
