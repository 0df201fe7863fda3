"""sbp serve in a pytest suite: one server for the session, reset before each test.

Copy this file next to your tests (docs/SERVE.md, "Use it in your tests"). It starts
`sbp serve` on free loopback ports with the management API over https, waits for its
--ready-file, and gives each test a server back at the file's entities:

    def test_orders(sbp):
        admin = ServiceBusAdministrationClient.from_connection_string(
            sbp.admin_connection_string, connection_verify=sbp.certificate)
        client = ServiceBusClient.from_connection_string(sbp.connection_string)
        ...
        sbp.advance(seconds=31)   # the broker's clock: a lock lapses, a message expires

SBP names the sbp binary (default: sbp on PATH); SBP_ENTITIES a scenario or Config.json
to serve instead of the default entities (a queue orders, a topic events with a
subscription audit). `serving(folder, entities)` starts a server of a test's own (another
tier, say).
"""

import contextlib
import json
import os
import subprocess
import time
import urllib.request

import pytest


class Sbp:
    """A running sbp serve: its connection strings and its test API."""

    def __init__(self, ready, certificate):
        self.connection_string = ready["connection_string"]
        self.admin_connection_string = ready["admin_connection_string"]
        self.certificate = str(certificate)
        self.http = "http://" + ready["listeners"]["http"]

    def _post(self, path):
        request = urllib.request.Request(
            self.http + path, method="POST", headers={"x-sbp-live": "1"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)

    def advance(self, seconds):
        """Moves the broker's clock forward: what falls due meanwhile happens now."""
        return self._post(f"/live/clock?by={int(seconds * 1000)}")

    def next_event(self):
        """Moves the broker's clock to its next timer (a lock's lapse, an expiry)."""
        return self._post("/live/clock?next")

    def reset(self):
        """Back to the served entities, with no message, lock or entity made since."""
        return self._post("/reset")


@contextlib.contextmanager
def serving(folder, entities=None):
    """sbp serve over `entities` (a scenario or Config.json; None: SBP_ENTITIES or the default
    entities) on free loopback ports, with its files in `folder`; stopped on leaving."""
    ready_file = folder / "ready.json"
    certificate = folder / "localhost.pem"
    command = [os.environ.get("SBP", "sbp"), "serve"]
    entities = entities or os.environ.get("SBP_ENTITIES")
    if entities:
        command.append(str(entities))
    command += [
        "--amqp", "127.0.0.1:0",
        "--http", "127.0.0.1:0",
        "--admin-tls", "127.0.0.1:0",
        "--tls-cert", str(certificate),
        "--ready-file", str(ready_file),
        "--quiet",
    ]
    log = open(folder / "sbp.log", "w")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while not ready_file.exists():
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sbp serve did not start: {(folder / 'sbp.log').read_text()}")
            time.sleep(0.02)
        yield Sbp(json.loads(ready_file.read_text()), certificate)
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()


@pytest.fixture(scope="session")
def sbp_server(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("sbp")) as server:
        yield server


@pytest.fixture
def sbp(sbp_server):
    sbp_server.reset()
    return sbp_server
