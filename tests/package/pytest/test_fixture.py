"""The Python package as a user installs it (tests/package/wheel.sh: a fresh venv, the built
wheel, the real SDK): the `sbp_serve` fixture comes from the package's pytest plugin, with no
conftest; sbp is the wheel's, which serves the UI from inside itself."""

import json
import re
import subprocess
import sys
import time
import urllib.request
from datetime import timedelta

import pytest
from azure.servicebus import ServiceBusClient, ServiceBusMessage
from azure.servicebus.management import ServiceBusAdministrationClient


@pytest.fixture
def admin(sbp_serve):
    """The management API of the test's server (its own localhost certificate trusted)."""
    with ServiceBusAdministrationClient.from_connection_string(
        sbp_serve.admin_connection_string, connection_verify=sbp_serve.certificate
    ) as client:
        yield client


def test_a_lock_lapses_on_the_moved_clock_and_the_message_is_dead_lettered_RCV_07(sbp_serve, admin):
    admin.create_queue("invoices", lock_duration=timedelta(seconds=30), max_delivery_count=1)
    with ServiceBusClient.from_connection_string(sbp_serve.connection_string) as client:
        with client.get_queue_sender("invoices") as sender:
            sender.send_messages(ServiceBusMessage("invoice 1"))
        with client.get_queue_receiver("invoices") as receiver:
            (message,) = receiver.receive_messages(max_wait_time=5)
            assert message.delivery_count == 0
            sbp_serve.advance(seconds=31)
        with client.get_queue_receiver("invoices", sub_queue="deadletter") as dlq:
            (dead,) = dlq.receive_messages(max_wait_time=5)
            assert dead.dead_letter_reason == "MaxDeliveryCountExceeded"
            dlq.complete_message(dead)


def test_each_test_has_a_server_of_its_own_at_the_default_entities(sbp_serve):
    with ServiceBusClient.from_connection_string(sbp_serve.connection_string) as client:
        with client.get_queue_receiver("orders") as receiver:
            assert receiver.peek_messages(max_message_count=10) == []
        with client.get_queue_sender("orders") as sender:
            sender.send_messages(ServiceBusMessage("left for the reset"))
    sbp_serve.reset()
    with ServiceBusClient.from_connection_string(sbp_serve.connection_string) as client:
        with client.get_queue_receiver("orders") as receiver:
            assert receiver.peek_messages(max_message_count=10) == []


@pytest.mark.sbp(entities="Config.json")
def test_a_test_serves_an_emulator_config_of_its_own(sbp_serve, admin):
    assert [q.name for q in admin.list_queues()] == ["payments"]
    assert admin.get_queue("payments").max_delivery_count == 4


@pytest.mark.sbp(entities=None)
def test_a_test_with_no_entity_makes_its_own(sbp_serve, admin):
    assert list(admin.list_queues()) == []


def test_the_packaged_sbp_serves_its_ui_from_memory_compressed(sbp_serve):
    page = urllib.request.urlopen(sbp_serve.playground, timeout=10).read().decode()
    assert "Service Bus Playground" in page
    # What a browser loads: the rest of the wasm the page carries the head of.
    wasm = re.search(r"\./sbp-ui-[0-9a-f]+_bg\.[0-9a-f]+\.rest\.wasm", page).group(0)
    request = urllib.request.Request(
        sbp_serve.http + "/" + wasm.removeprefix("./"), headers={"accept-encoding": "br"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.headers["content-encoding"] == "br"
        assert response.headers["content-type"] == "application/wasm"
    health = sbp_serve.health()
    assert health["listeners"]["admin_tls"]


@pytest.mark.sbp(entities="preset:lapsed-locks-to-dlq")
def test_a_test_serves_a_preset(sbp_serve, admin):
    assert [q.name for q in admin.list_queues()] == ["orders"]
    assert admin.get_queue("orders").max_delivery_count == 3


def _gone(pid):
    """Whether process `pid` has ended (gone, or a zombie nobody has reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_server_ends_with_the_process_that_started_it_even_on_kill_9(tmp_path):
    harness = tmp_path / "harness.py"
    harness.write_text(
        "import sys, time\n"
        "from sbp_playground import sbp_serving\n"
        "with sbp_serving(sys.argv[1]) as server:\n"
        "    print(server.pid, flush=True)\n"
        "    time.sleep(60)\n"
    )
    folder = tmp_path / "sbp"
    folder.mkdir()
    started = subprocess.Popen([sys.executable, str(harness), str(folder)], stdout=subprocess.PIPE, text=True)
    pid = int(started.stdout.readline())
    assert not _gone(pid)
    started.kill()
    started.wait()
    deadline = time.monotonic() + 10
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid), f"sbp serve {pid} outlived the process that started it"
