// Makes the npm package's tarball: `node packages/npm/pack.mjs SITE_DIR OUT_DIR`.
// SITE_DIR is the built site (dist/, built with relative URLs so that it works at any path).
// A staging copy of this folder is made under OUT_DIR with SITE_DIR as its `site/` and the
// workspace's version (Cargo.toml, [workspace.package]) in its package.json (and, in GitHub
// Actions, the repository); `npm pack` runs there and writes the .tgz into OUT_DIR; its path
// is printed. Nothing is published.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const [siteArg, outArg] = process.argv.slice(2);
if (!siteArg || !outArg) {
  console.error('usage: node packages/npm/pack.mjs SITE_DIR OUT_DIR');
  process.exit(2);
}
const site = path.resolve(siteArg);
const out = path.resolve(outArg);
if (!fs.existsSync(path.join(site, 'index.html'))) {
  console.error(`${site}: no index.html (build the site first: scripts/build-ui.sh)`);
  process.exit(1);
}

// The workspace's version: the `version` line of Cargo.toml's [workspace.package] table.
function cargoVersion() {
  const toml = fs.readFileSync(path.join(here, '../../Cargo.toml'), 'utf8');
  const table = toml.split(/^\[/m).find((t) => t.startsWith('workspace.package]'));
  const m = table && /^version\s*=\s*"([^"]+)"/m.exec(table);
  if (!m) throw new Error('Cargo.toml: no version in [workspace.package]');
  return m[1];
}

const manifest = JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8'));
const version = cargoVersion();
if (manifest.version !== version) {
  console.error(`note: packages/npm/package.json says ${manifest.version}, Cargo.toml ${version}; the package gets ${version}`);
}
manifest.version = version;
// npm publish --provenance refuses a package whose repository.url is not the repository that
// built it. In GitHub Actions that repository is known: it goes in unless one is written.
if (!manifest.repository && process.env.GITHUB_REPOSITORY) {
  const server = process.env.GITHUB_SERVER_URL || 'https://github.com';
  manifest.repository = { type: 'git', url: `git+${server}/${process.env.GITHUB_REPOSITORY}.git`, directory: 'packages/npm' };
}

fs.mkdirSync(out, { recursive: true });
const stage = fs.mkdtempSync(path.join(out, 'stage-'));
try {
  for (const file of ['element.js', 'element.d.ts', 'react.d.ts', 'README.md']) fs.copyFileSync(path.join(here, file), path.join(stage, file));
  fs.copyFileSync(path.join(here, '../../LICENSE'), path.join(stage, 'LICENSE'));
  fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  fs.cpSync(site, path.join(stage, 'site'), { recursive: true, dereference: true });
  const report = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], {
    cwd: stage,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [{ filename }] = JSON.parse(report);
  console.log(path.join(out, path.basename(filename)));
} finally {
  fs.rmSync(stage, { recursive: true, force: true });
}
