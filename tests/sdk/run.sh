#!/usr/bin/env bash
# The real SDKs against `sbp serve`: starts it on a free loopback port over
# tests/sdk/entities.json, runs the Python SDK's checks (tests/sdk/python_sdk.py), stops it
# with SIGTERM so it writes the recorded run, and checks that the recording replays to the
# state the live run reached (`sbp check`). Needs target/debug/sbp and tests/sdk/.venv
# (scripts/setup.sh makes the venv).
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; rm -rf "$tmp"' EXIT
./target/debug/sbp serve tests/sdk/entities.json --amqp 127.0.0.1:0 --record "$tmp/recorded.json" > "$tmp/serve.log" 2>&1 &
server=$!
conn=""
for _ in $(seq 1 100); do
  conn="$(grep -o 'Endpoint=sb://[^ ]*' "$tmp/serve.log" || true)"
  [ -n "$conn" ] && break
  sleep 0.1
done
if [ -z "$conn" ]; then cat "$tmp/serve.log"; echo "sbp serve did not start"; exit 1; fi
status=0
timeout 300 tests/sdk/.venv/bin/python tests/sdk/python_sdk.py "$conn" || status=$?
kill -TERM "$server"
wait "$server" || true
if [ "$status" != 0 ]; then tail -40 "$tmp/serve.log"; exit "$status"; fi
echo "the recorded run ($(grep -c '"at"' "$tmp/recorded.json") steps) replays to the live run's state:"
./target/debug/sbp check "$tmp/recorded.json"
