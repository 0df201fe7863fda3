#!/usr/bin/env bash
# Makes what users install, in target/package/ (nothing is uploaded anywhere):
#   site/, service-bus-playground-site-VERSION.tar.gz   the static playground: any host, any path
#   sbp, sbp-VERSION-linux-x86_64.tar.gz                the command line, the UI inside
#   service_bus_playground-VERSION-*.whl                 Python: sbp on PATH and the pytest fixture
#   service-bus-playground-VERSION.tgz                   npm: the site and <service-bus-playground>
# Usage: ./scripts/package.sh [--ui-built]   (--ui-built: dist/ is current; it is not built again)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
say() { printf '\033[1m[package]\033[0m %s\n' "$*"; }
OUT=target/package
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
MATURIN=tests/sdk/.venv/bin/maturin
if [ ! -x "$MATURIN" ]; then
  echo "maturin is missing: ./scripts/setup.sh installs it (tests/sdk/.venv)" >&2
  exit 1
fi

if [ "${1:-}" != "--ui-built" ] || [ ! -f dist/index.html ]; then
  ./scripts/build-ui.sh
fi
rm -rf "$OUT" && mkdir -p "$OUT"

say "site/: the static playground (relative URLs: it works at any path)"
cp -r dist "$OUT/site"
tar -czf "$OUT/service-bus-playground-site-$VERSION.tar.gz" -C "$OUT" site

say "the UI as sbp carries it: each file with its brotli and gzip forms"
node scripts/precompress.mjs "$OUT/site" "$OUT/ui"

say "the Python wheel (maturin): sbp with the UI inside, and the pytest plugin"
# maturin builds sbp itself (the release profile, feature `ui`), in the workspace's target/.
(cd packages/python && SBP_UI_DIR="$PWD/../../$OUT/ui" "../../$MATURIN" build --release --quiet --out "../../$OUT")
# The wheel's sbp (stripped), also on its own.
python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); open(sys.argv[2], "wb").write(z.read(next(n for n in z.namelist() if n.endswith("/scripts/sbp"))))' \
  "$(ls "$OUT"/service_bus_playground-*.whl | head -1)" "$OUT/sbp"
chmod +x "$OUT/sbp"
tar -czf "$OUT/sbp-$VERSION-linux-$(uname -m).tar.gz" -C "$OUT" sbp

say "the npm package: the site and the <service-bus-playground> element"
node packages/npm/pack.mjs "$OUT/site" "$OUT"

say "made:"
ls -1 "$OUT"
