"""sbp serve in a pytest suite: one server for the session, reset before each test.

The server and its test API are the Python package's (`sbp_playground`, packages/python:
with it installed, the fixture `sbp_serve` gives each test a server of its own). This suite
shows the other shape: one server for the session, reset before each test, which is quicker
when a suite has many tests:

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

import os
import pathlib
import sys

import pytest

try:
    from sbp_playground import sbp_serving
except ImportError:
    # This checkout's copy of the package, when it is not installed.
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "packages/python/python"))
    from sbp_playground import sbp_serving


def serving(folder, entities=None):
    """sbp serve over `entities` (a scenario or Config.json; None: SBP_ENTITIES or the default
    entities) on free loopback ports, with its files in `folder`; stopped on leaving."""
    return sbp_serving(folder, entities or os.environ.get("SBP_ENTITIES") or "default")


@pytest.fixture(scope="session")
def sbp_server(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("sbp")) as server:
        yield server


@pytest.fixture
def sbp(sbp_server):
    sbp_server.reset()
    return sbp_server
