#!/usr/bin/env bash
# The real SDKs against `sbp serve`. For each SDK (Python azure-servicebus, JavaScript
# @azure/service-bus): starts a fresh server on a free loopback port over
# tests/sdk/entities.json, runs that SDK's checks, stops the server with SIGTERM so that it
# writes the recorded run, and checks that the recording replays to the state the live run
# reached (`sbp check`). Then a server is stopped and started again over its --state file: no
# message is lost. Needs target/debug/sbp, tests/sdk/.venv and tests/sdk/js/node_modules
# (scripts/setup.sh makes both).
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT

against_server() { # name, command... (the connection string is appended)
  local name="$1"; shift
  ./target/debug/sbp serve ${SERVE_FILE:-tests/sdk/entities.json} --amqp 127.0.0.1:0 --http none \
    --record "$tmp/$name.json" --state "$tmp/state.json" > "$tmp/$name.log" 2>&1 &
  server=$!
  local conn=""
  for _ in $(seq 1 100); do
    conn="$(grep -o 'Endpoint=sb://[^ ]*' "$tmp/$name.log" || true)"
    [ -n "$conn" ] && break
    sleep 0.1
  done
  if [ -z "$conn" ]; then cat "$tmp/$name.log"; echo "sbp serve did not start"; exit 1; fi
  local status=0
  echo "-- $name SDK"
  timeout 300 "$@" "$conn" || status=$?
  kill -TERM "$server"
  wait "$server" || true
  server=""
  if [ "$status" != 0 ]; then tail -40 "$tmp/$name.log"; exit "$status"; fi
  echo "the recorded run ($(grep -c '"at"' "$tmp/$name.json") steps) replays to the live run's state:"
  ./target/debug/sbp check "$tmp/$name.json"
}

rm -f "$tmp/state.json"
against_server python tests/sdk/.venv/bin/python tests/sdk/python_sdk.py
rm -f "$tmp/state.json"
against_server javascript node tests/sdk/js/sdk.mjs
# Microsoft's quickstarts, as published, against the default entities (queue orders).
rm -f "$tmp/state.json"
against_server quickstarts tests/sdk/quickstarts.sh
# --state: a restart loses no message (the second server takes up the first one's state).
rm -f "$tmp/state.json"
against_server before-restart tests/sdk/.venv/bin/python tests/sdk/restart.py send
against_server after-restart tests/sdk/.venv/bin/python tests/sdk/restart.py receive
# --play: a preset runs to its end first; the SDK finds its dead-lettered message there.
rm -f "$tmp/state.json"
SERVE_FILE="preset:ttl-expiry-to-dlq --play" against_server played tests/sdk/.venv/bin/python tests/sdk/played.py
# sbp serve in a test suite, as docs/SERVE.md shows it: pytest (tests/sdk/pytest) and Vitest
# (tests/sdk/js/admin.test.mjs) each start their own server with the management API over
# https, make entities with the real administration clients, move the clock and reset.
echo "-- pytest: sbp serve in a Python test suite"
SBP="$PWD/target/debug/sbp" timeout 300 tests/sdk/.venv/bin/python -m pytest -q -p no:cacheprovider tests/sdk/pytest
echo "-- Vitest: sbp serve in a JavaScript test suite"
(cd tests/sdk/js && SBP="$PWD/../../../target/debug/sbp" timeout 300 node_modules/.bin/vitest run admin.test.mjs)
