#!/usr/bin/env bash
# Builds the UI into dist/ with trunk, offline, minifies what the pages load first, then puts a
# Content-Security-Policy into each page.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/tests/e2e/node_modules/.bin:$HOME/.cargo/bin:$PATH"   # wasm-opt from npm's binaryen
export TRUNK_OFFLINE=true TRUNK_SKIP_VERSION_CHECK=true
# The browser's wasm builds std anew, its panics a bare trap: no panic messages, locations or
# their formatting code in the wasm (the playground's 16.0 KB brotli less, measured; a panic
# stopped the app before as well, as panic = "abort" with no hook to print to). These are
# unstable switches of the stable toolchain, for this build only (RUSTC_BOOTSTRAP); rust-src
# comes from setup.sh.
export RUSTC_BOOTSTRAP=1 CARGO_UNSTABLE_BUILD_STD=std,panic_abort
export CARGO_UNSTABLE_PANIC_IMMEDIATE_ABORT=true CARGO_PROFILE_WASM_RELEASE_PANIC=immediate-abort
trunk build --release --offline
# The send lab's page, a wasm of its own that the playground loads when the lab is opened.
trunk build lab.html --release --offline --dist dist/lab --public-url ./
# The lesson builder's page, a wasm of its own.
trunk build builder.html --release --offline --dist dist/builder --public-url ./
# The emulator's Config.json in and out, a wasm of its own.
trunk build emulator.html --release --offline --dist dist/emulator --public-url ./
# The trainer's page of a workshop's room (sbp serve keeps the room), a wasm of its own.
trunk build trainer.html --release --offline --dist dist/trainer --public-url ./
# The element's copy in the site is the site's own: the site it loads is the one it is in
# (the npm package's element.js, beside its site/ folder, keeps './site/index.html').
sed -i "s#^const SITE_BESIDE = './site/index.html';#const SITE_BESIDE = './index.html';#" dist/element.js
grep -q "^const SITE_BESIDE = './index.html';" dist/element.js || { echo "dist/element.js: SITE_BESIDE not set" >&2; exit 1; }
# The first visit's welcome texts, from the catalogs, into index.html's inline script.
node scripts/first-screen.mjs dist
# The glue, snippets, stylesheets and inline scripts minified (esbuild), their hashes anew.
node scripts/minify.mjs dist
# The catalogs, the lesson track and the glue carried in the playground's page itself.
node scripts/carry.mjs dist
node scripts/csp.mjs dist
