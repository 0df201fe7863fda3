#!/usr/bin/env bash
# Installs what the build and the tests need, and only what is missing.
# Safe to run again: every step checks first. Used by scripts/serve.sh and scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=0.2.130   # must equal the `wasm-bindgen = "=..."` pin in Cargo.toml

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
SUDO=""
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
# rust-src: the browser's wasm builds std anew (scripts/build-ui.sh).
for comp in rustfmt clippy rust-src; do
  if ! rustup component list --installed 2>/dev/null | grep -q "^$comp"; then
    say "adding rustup component $comp"
    rustup component add "$comp"
  fi
done

# What the offline builds (trunk's) compile: the workspace's crates, and std's own, since the
# browser's wasm builds std anew (scripts/build-ui.sh). A second or so when all is there.
cargo fetch -q
RUSTC_BOOTSTRAP=1 cargo fetch --locked -q --target wasm32-unknown-unknown \
  --manifest-path "$(rustc --print sysroot)/lib/rustlib/src/rust/library/Cargo.toml"

if ! command -v trunk >/dev/null 2>&1 || ! trunk --version 2>/dev/null | grep -q "$TRUNK_VERSION"; then
  say "installing trunk $TRUNK_VERSION (about 10 minutes, once)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

if ! command -v wasm-bindgen >/dev/null 2>&1 || ! wasm-bindgen --version 2>/dev/null | grep -q "$WASM_BINDGEN_VERSION"; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 4 minutes, once)"
  # Not --locked: its lock file pins a yanked webpki-roots.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  say "installing node and npm (wasm tests, browser tests)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi

if ! command -v python3 >/dev/null 2>&1; then
  say "installing python3 (the generated Python is compiled by a test)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3 >/dev/null
fi

if [ "${SETUP_BROWSER:-1}" = 1 ]; then
  if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    say "installing Debian's chromium and chromium-driver"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
  fi
  if [ ! -d tests/e2e/node_modules/playwright-core ] || [ ! -d tests/e2e/node_modules/binaryen ] || [ ! -d tests/e2e/node_modules/axe-core ] \
    || [ ! -d tests/e2e/node_modules/esbuild ]; then
    say "installing the build's and browser tests' packages (playwright-core, binaryen, esbuild, axe-core) with npm"
    # playwright-core never downloads a browser; we use Debian's chromium.
    (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi
# The real Service Bus SDK the endpoint's tests run (tests/sdk): a Python venv with
# azure-servicebus (pure Python), pinned in tests/sdk/requirements.txt.
if [ ! -x tests/sdk/.venv/bin/python ] || ! tests/sdk/.venv/bin/python -c "import azure.servicebus, mypy, pytest, pyflakes" 2>/dev/null \
  || [ ! -x tests/sdk/.venv/bin/maturin ]; then
  say "installing the Python SDK for the endpoint's tests and maturin for the wheel (tests/sdk/.venv)"
  if ! python3 -m venv tests/sdk/.venv 2>/dev/null; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv tests/sdk/.venv
  fi
  tests/sdk/.venv/bin/pip install -q -r tests/sdk/requirements.txt
fi
# The packages' tests (tests/package): React, MDX, a bundler and VitePress to try the npm
# element in.
if [ "${SETUP_BROWSER:-1}" = 1 ] && [ ! -d tests/package/node_modules/react-dom ]; then
  say "installing the packages' test dependencies (tests/package) with npm"
  (cd tests/package && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ ! -d tests/sdk/js/node_modules/@azure/service-bus ] || [ ! -d tests/sdk/js/node_modules/typescript ] \
  || [ ! -d tests/sdk/js/node_modules/vitest ] || [ ! -d tests/sdk/js/node_modules/eslint ]; then
  say "installing the JavaScript SDK for the endpoint's tests (tests/sdk/js)"
  (cd tests/sdk/js && npm ci --no-audit --no-fund --loglevel=error)
fi
say "ready"
