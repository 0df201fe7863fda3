#!/usr/bin/env bash
# The Python package as a user installs it: a fresh venv, the wheel scripts/package.sh built,
# the real SDK and pytest from the registry; then tests/package/pytest run from a folder
# outside the checkout (no conftest: the fixture is the plugin's; sbp is the wheel's).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
WHEEL=$(ls target/package/service_bus_playground-*.whl | head -1)
VENV=target/package-test/venv
rm -rf target/package-test && mkdir -p target/package-test
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q "$WHEEL" azure-servicebus==7.15.0 pytest==8.4.2
cp -r tests/package/pytest target/package-test/suite
cd target/package-test/suite
# Not the checkout's sbp nor one on PATH: the wheel's own.
env -u SBP PATH=/usr/bin:/bin "$REPO/$VENV/bin/python" -m pytest -q -p no:cacheprovider
