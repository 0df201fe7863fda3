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
say "sbp check with the packaged sbp: a lesson element without site= read from the lessons it carries; the site's own pages passed over"
docs=$(mktemp -d)
mkdir -p "$docs/guide" && cp -r target/package/site "$docs/playground"
printf '# Retries\n\n<service-bus-playground lesson="max-delivery-count"></service-bus-playground>\n' > "$docs/guide/retries.md"
printf '<service-bus-playground lesson="no-such-lesson"></service-bus-playground>\n' > "$docs/guide/typo.md"
out=$(target/package/sbp check --require-expectations "$docs" || true)
rm -rf "$docs"
if ! grep -q "retries.md:3 lesson max-delivery-count (as this sbp carries it) (lesson" <<<"$out" \
  || ! grep -q "FAIL .*typo.md:1 lesson no-such-lesson" <<<"$out" \
  || grep -q "playground/" <<<"$out"; then
  echo "sbp check did not read the docs as expected:" >&2
  echo "$out" >&2
  exit 1
fi
echo "ok   the lesson from the lessons sbp carries, the misspelled one failed, the site passed over"
say "the Python wheel in a fresh venv"
tests/package/wheel.sh
target/package-test/venv/bin/pip install -q twine==6.2.0
target/package-test/venv/bin/twine check --strict target/package/service_bus_playground-*.whl
say "the npm package"
node tests/package/element.mjs
(cd target/package && npm publish --dry-run --loglevel=error ./service-bus-playground-*.tgz >/dev/null)
echo "npm publish --dry-run: ok"
