#!/usr/bin/env bash
# Microsoft's Python and JavaScript quickstarts against one `sbp serve` (its connection string is
# the last argument): each must get back every message it sent.
set -euo pipefail
cd "$(dirname "$0")/../.."
conn="${!#}"
py="$(tests/sdk/.venv/bin/python tests/sdk/quickstart.py "$conn" 2>/dev/null)"
n="$(grep -c '^Received: ' <<<"$py" || true)"
[ "$n" = 16 ] || { echo "$py"; echo "FAIL the Python quickstart got $n of 16 messages"; exit 1; }
echo "ok   Microsoft's Python quickstart: sent and received 16 messages"
node tests/sdk/js/quickstart/send.cjs "$conn"
js="$(node tests/sdk/js/quickstart/receive.cjs "$conn")"
n="$(grep -c '^Received message: ' <<<"$js" || true)"
[ "$n" = 10 ] || { echo "$js"; echo "FAIL the JavaScript quickstart got $n of 10 messages"; exit 1; }
echo "ok   Microsoft's JavaScript quickstart: sent and received 10 messages"
