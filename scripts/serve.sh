#!/usr/bin/env bash
# The main command: installs what is missing, builds the UI and `sbp`, and runs `sbp serve`:
# the playground on http://127.0.0.1:8080 and the AMQP endpoint the Service Bus SDKs connect
# to on 127.0.0.1:5672 (its connection string is printed). Ctrl+C stops it.
# PORT and AMQP_PORT choose other ports; any arguments go to `sbp serve` (a scenario file,
# a Config.json, --record FILE...).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build-ui.sh
cargo build --release -q -p sbp-cli
port="${PORT:-8080}"
amqp_port="${AMQP_PORT:-5672}"
exec ./target/release/sbp serve --http "127.0.0.1:$port" --amqp "127.0.0.1:$amqp_port" "$@"
