#!/usr/bin/env bash
# Every package scripts/package.sh made, tried as its users install it, and checked as far as
# a release goes before its upload (nothing is ever uploaded from here):
#   the site at a sub-path and the packaged sbp from any folder (site.mjs, in chromium);
#   the wheel in a fresh venv with the real SDK and pytest (wheel.sh), then `twine check`;
#   the npm package in a page, React, MDX, a bundler, VitePress and MkDocs (element.mjs), then
#   `npm publish --dry-run`.
set -euo pipefail
cd "$(dirname "$0")/../.."
say() { printf '\033[1m[packages]\033[0m %s\n' "$*"; }
say "the site at a sub-path, sbp from any folder"
node tests/package/site.mjs
say "the Python wheel in a fresh venv"
tests/package/wheel.sh
target/package-test/venv/bin/pip install -q twine==6.2.0
target/package-test/venv/bin/twine check --strict target/package/service_bus_playground-*.whl
say "the npm package"
node tests/package/element.mjs
(cd target/package && npm publish --dry-run --loglevel=error ./service-bus-playground-*.tgz >/dev/null)
echo "npm publish --dry-run: ok"
