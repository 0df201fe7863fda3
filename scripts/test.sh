#!/usr/bin/env bash
# The test command: installs what is missing, then fmt, clippy, every test (property tests
# included), the engine for wasm32, every preset through the CLI, a fuzz run, the UI build and
# the browser tests; then every package built and tried as its users install it.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check
step "no import circle between the files of a crate"
if [ -x ../shared/tools/import-cycles ]; then
  ../shared/tools/import-cycles crates
else
  echo "(../shared/tools/import-cycles is not beside this clone: skipped)"
fi
step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets -- -D warnings
step "cargo test"
cargo test --workspace
step "the engine's rule tests in wasm32-unknown-unknown (node, wasm-bindgen-test-runner)"
cargo test -p sbp-engine --target wasm32-unknown-unknown --test rules --test traffic --test regressions --test map
cargo build -p sbp-scenario --target wasm32-unknown-unknown
step "every preset through the CLI"
cargo run -q -p sbp-cli -- check
step "every lesson through the CLI (start, computed answers, solutions reach their goals)"
cargo run -q -p sbp-cli -- check $(find web/lessons -name "*.json" ! -name index.json | sort)
step "this repository's documentation as a docs site's CI checks it (every playground link and embed, each with expectations)"
cargo run -q -p sbp-cli -- check --require-expectations README.md docs web/embed-demo.html
step "the real Python SDK against sbp serve (tests/sdk/run.sh), and its recorded run replayed"
tests/sdk/run.sh
step "every preset as Python and JavaScript code (sbp code) against sbp serve, each check as the playground showed"
tests/sdk/presets.sh
step "fault and soak run: real SDK clients under attack and kill -9, nothing acknowledged lost (tests/sdk/soak.py; long run: docs/TESTING.md)"
tests/sdk/.venv/bin/python tests/sdk/soak.py --seconds 60 --seed "${SOAK_SEED:-1}"
step "fuzz: 20,000 links and scenario files (a long run: docs/TESTING.md)"
cargo run -q --release -p sbp-cli -- fuzz --inputs 20000 --seed "${FUZZ_SEED:-1}"
step "fuzz: 20,000 sequences of AMQP frames into sbp serve's protocol core (a long run: docs/TESTING.md)"
cargo run -q --release -p sbp-cli -- fuzz --amqp --inputs 20000 --seed "${FUZZ_SEED:-1}"
if [ -f crates/ui/Cargo.toml ]; then
  step "UI build (trunk --release)"
  ./scripts/build-ui.sh
  step "browser tests (headless chromium)"
  node tests/e2e/run.mjs
  step "packages (scripts/package.sh): the site, sbp with the UI inside, the Python wheel, the npm package"
  ./scripts/package.sh --ui-built
  step "the packages as their users install them (tests/package/run.sh)"
  tests/package/run.sh
fi
