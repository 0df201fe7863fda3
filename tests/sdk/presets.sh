#!/usr/bin/env bash
# Every preset as the code `sbp code` writes (Python and JavaScript), type-checked and linted (mypy
# --strict, pyflakes, tsc --checkJs, eslint), then run against `sbp serve`
# over that preset's entities: each program checks what the broker returns at each point the
# playground showed something, and exits 0 only if every check agrees. Scenarios that wait
# minutes run faster: `sbp serve --speed N` and the program's SBP_SPEED=N, N chosen so that a
# run takes about 30 s of wall time (sessions at 1: its steps are a few seconds apart from a
# lock's lapse, and the Python SDK takes up to a second to open a session receiver).
# Needs target/debug/sbp, tests/sdk/.venv and tests/sdk/js/node_modules (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

one() { # preset, language (py or js), how its entities are made (file, or admin: by the program)
  local name="$1" lang="$2" how="${3:-file}" dir="$tmp/$1-$2-${3:-file}"
  mkdir -p "$dir"
  ./target/debug/sbp code "preset:$name" --lang "$lang" > "$dir/prog.$lang"
  local end speed
  end=$(grep -oE '(wait_until|waitUntil)\([0-9]+\)' "$dir/prog.$lang" | grep -oE '[0-9]+' | sort -n | tail -1)
  speed=$(( (${end:-0} + 29999) / 30000 )); [ "$speed" -lt 1 ] && speed=1; [ "$speed" -gt 100 ] && speed=100
  [ "$name" = sessions ] && speed=1
  # admin: a namespace without the preset's entities and the management API over https; the
  # program makes them itself (SERVICEBUS_ADMIN_CONNECTION), trusting the server's certificate.
  local extra=()
  [ "$how" = admin ] && extra=(--no-entities --admin-tls 127.0.0.1:0 --tls-cert "$dir/localhost.pem")
  ./target/debug/sbp serve "preset:$name" --amqp 127.0.0.1:0 --http none --quiet --speed "$speed" \
    --ready-file "$dir/ready.json" "${extra[@]}" > "$dir/serve.log" 2>&1 &
  local server=$! conn="" admin=""
  for _ in $(seq 1 100); do [ -f "$dir/ready.json" ] && break; sleep 0.1; done
  conn="$(tests/sdk/.venv/bin/python -c 'import json,sys; print(json.load(open(sys.argv[1]))["connection_string"])' "$dir/ready.json")"
  if [ "$how" = admin ]; then
    admin="$(tests/sdk/.venv/bin/python -c 'import json,sys; print(json.load(open(sys.argv[1]))["admin_connection_string"])' "$dir/ready.json")"
  fi
  local status=0 env=(SBP_SPEED="$speed" SERVICEBUS_CONNECTION="$conn")
  if [ -n "$admin" ]; then
    env+=(SERVICEBUS_ADMIN_CONNECTION="$admin" REQUESTS_CA_BUNDLE="$dir/localhost.pem" NODE_EXTRA_CA_CERTS="$dir/localhost.pem")
  fi
  if [ "$lang" = py ]; then
    env "${env[@]}" timeout 120 tests/sdk/.venv/bin/python "$dir/prog.py" > "$dir/out" 2>&1 || status=$?
  else
    # CommonJS, beside the SDK's node_modules.
    cp "$dir/prog.js" "tests/sdk/js/.prog-$name-$how.cjs"
    env "${env[@]}" timeout 120 node "tests/sdk/js/.prog-$name-$how.cjs" > "$dir/out" 2>&1 || status=$?
    rm -f "tests/sdk/js/.prog-$name-$how.cjs"
  fi
  kill "$server" 2>/dev/null || true
  if [ "$status" = 0 ]; then
    echo "ok   $name.$lang, entities by $how (x$speed): $(grep -c '^as the playground showed' "$dir/out") checks as the playground showed, $(grep -c '^not checked' "$dir/out") not checked"
  else
    echo "FAIL $name.$lang, entities by $how (x$speed)"; grep -v '^as the playground showed' "$dir/out" | tail -15 | sed 's/^/     /'
    return 1
  fi
}
export -f one
export tmp
presets=$(./target/debug/sbp presets | awk '{print $1}')
# As written, every program type-checks: mypy --strict and pyflakes, and tsc over the JavaScript
# (checkJs, against the SDK's own types).
mkdir -p "$tmp/types" tests/sdk/js/.types
for p in $presets; do
  ./target/debug/sbp code "preset:$p" --lang py > "$tmp/types/$p.py"
  ./target/debug/sbp code "preset:$p" --lang js > "tests/sdk/js/.types/$p.js"
done
tests/sdk/.venv/bin/mypy --strict --cache-dir "$tmp/.mypy_cache" "$tmp"/types/*.py
# pyflakes: nothing imported that the program does not use.
tests/sdk/.venv/bin/python -m pyflakes "$tmp"/types/*.py
(cd tests/sdk/js && node node_modules/typescript/bin/tsc --allowJs --checkJs --noEmit --module commonjs \
  --target es2022 --types node --skipLibCheck .types/*.js) || { rm -rf tests/sdk/js/.types; exit 1; }
# eslint's recommended rules (tests/sdk/js/eslint.config.js): nothing declared that is not used.
(cd tests/sdk/js && node node_modules/eslint/bin/eslint.js --max-warnings 0 .types/*.js) || { rm -rf tests/sdk/js/.types; exit 1; }
rm -rf tests/sdk/js/.types
echo "mypy --strict, pyflakes, tsc --checkJs and eslint: every preset's program is clean"
# Each program twice: against the preset's entities as sbp serve makes them from the file, and
# making them itself through the management API (its administration calls then run too).
jobs=$(for p in ${PRESETS:-$presets}; do for how in file admin; do echo "$p js $how"; echo "$p py $how"; done; done)
echo "$jobs" | xargs -P 8 -L 1 bash -c 'one "$0" "$1" "$2"'
# A broker that answers otherwise than the playground (issue 34): the program exported from a
# preset, run against the same preset with one setting changed (MaxDeliveryCount 1, so the
# deferred message is gone when it is asked for by its number). Each call is one checked
# attempt: the error is a difference named with its step, no traceback or error dump, and the
# program ends with its summary and exit code 1.
differs() { # language, and "admin" to give the program the management API too
  local lang="$1" how="${2:-}" dir="$tmp/differs-$1-${2:-plain}"
  mkdir -p "$dir"
  ./target/debug/sbp code preset:defer-and-receive-by-seq --lang "$lang" > "$dir/prog.$lang"
  ./target/debug/sbp presets --write "$dir/presets" > /dev/null
  tests/sdk/.venv/bin/python - "$dir/presets/defer-and-receive-by-seq.json" "$dir/variant.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for e in s["entities"]:
    e["max_delivery_count"] = 1
json.dump(s, open(sys.argv[2], "w"))
PY
  local extra=()
  [ "$how" = admin ] && extra=(--admin-tls 127.0.0.1:0 --tls-cert "$dir/localhost.pem")
  ./target/debug/sbp serve "$dir/variant.json" --amqp 127.0.0.1:0 --http none --quiet \
    --ready-file "$dir/ready.json" "${extra[@]}" > "$dir/serve.log" 2>&1 &
  local server=$! status=0
  for _ in $(seq 1 100); do [ -f "$dir/ready.json" ] && break; sleep 0.1; done
  local env=(SERVICEBUS_CONNECTION="$(tests/sdk/.venv/bin/python -c 'import json,sys; print(json.load(open(sys.argv[1]))["connection_string"])' "$dir/ready.json")")
  if [ "$how" = admin ]; then
    env+=(SERVICEBUS_ADMIN_CONNECTION="$(tests/sdk/.venv/bin/python -c 'import json,sys; print(json.load(open(sys.argv[1]))["admin_connection_string"])' "$dir/ready.json")"
      REQUESTS_CA_BUNDLE="$dir/localhost.pem" NODE_EXTRA_CA_CERTS="$dir/localhost.pem")
  fi
  if [ "$lang" = py ]; then
    env "${env[@]}" timeout 60 tests/sdk/.venv/bin/python "$dir/prog.py" > "$dir/out" 2>&1 || status=$?
  else
    cp "$dir/prog.js" "tests/sdk/js/.prog-differs-$how.cjs"
    env "${env[@]}" timeout 60 node "tests/sdk/js/.prog-differs-$how.cjs" > "$dir/out" 2>&1 || status=$?
    rm -f "tests/sdk/js/.prog-differs-$how.cjs"
  fi
  kill "$server" 2>/dev/null || true
  # With the management API, the queue is there already: the program compares its settings
  # first and names the one that differs; it is not made again.
  local setting='^DIFFERS: orders MaxDeliveryCount: the playground showed 10, the broker returned 1$'
  if [ "$status" = 1 ] \
    && grep -q '^DIFFERS: t=6s: receive deferred #1 from orders: the playground showed no error, the broker returned MessageNotFound$' "$dir/out" \
    && grep -q '^Checks that differ from the playground: .*t=6s: receive deferred #1 from orders' "$dir/out" \
    && { [ "$how" != admin ] || grep -q "$setting" "$dir/out"; } \
    && { [ "$how" = admin ] || ! grep -q 'MaxDeliveryCount' "$dir/out"; } \
    && ! grep -qiE 'traceback|^\s+at |unhandled' "$dir/out"; then
    echo "ok   defer-and-receive-by-seq.$lang against MaxDeliveryCount 1${how:+ (with the management API: the setting named)}: the error a difference of its step, the summary printed, exit 1"
  else
    echo "FAIL defer-and-receive-by-seq.$lang against MaxDeliveryCount 1 ${how} (exit $status)"; tail -20 "$dir/out" | sed 's/^/     /'
    return 1
  fi
}
differs py
differs js
differs py admin
differs js admin
