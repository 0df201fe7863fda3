#!/usr/bin/env bash
# The main command: installs what is missing, builds the UI and serves it on http://127.0.0.1:8080
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build-ui.sh
port="${PORT:-8080}"
echo "Service Bus Playground: http://127.0.0.1:$port/  (Ctrl+C stops it)"
exec python3 -m http.server "$port" --bind 127.0.0.1 --directory dist
