"""The pytest plugin (registered by the package's `pytest11` entry point): a fixture
`sbp_serve` that gives each test its own sbp serve.

    def test_orders(sbp_serve):
        client = ServiceBusClient.from_connection_string(sbp_serve.connection_string)
        ...
        sbp_serve.advance(seconds=31)

The entities served: the ini option `sbp_entities` (a scenario or Config.json path, relative
to the rootdir), else the default ones; a test's own with `@pytest.mark.sbp(entities=PATH)`
(relative to the test's file),
none with `@pytest.mark.sbp(entities=None)`.
"""

import pytest

from . import sbp_serving


def pytest_addoption(parser):
    parser.addini(
        "sbp_entities",
        "a scenario or emulator Config.json that sbp_serve serves (default: a queue orders, "
        "a topic events with a subscription audit)",
        default="",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "sbp(entities=PATH|None): what sbp_serve serves for this test (None: no entity)",
    )


@pytest.fixture
def sbp_serve(request, tmp_path):
    """sbp serve for this test, on free loopback ports; stopped after it."""
    entities = "default"
    configured = request.config.getini("sbp_entities")
    if configured:
        entities = configured if configured.startswith("preset:") else str(request.config.rootpath / configured)
    marker = request.node.get_closest_marker("sbp")
    if marker is not None and "entities" in marker.kwargs:
        entities = marker.kwargs["entities"]
        if entities not in (None, "default") and not str(entities).startswith("preset:"):
            # A path relative to the test's own file.
            entities = str(request.path.parent / entities)
    folder = tmp_path / "sbp"
    folder.mkdir()
    with sbp_serving(folder, entities) as server:
        yield server
