"""A server of a test's own, on the Premium tier: messages past Standard's 256 KB are taken
(SEND-04: 100 MB on Premium), up to what the playground stores at once (32 MB of bodies),
which it names when a message passes it."""

import json

import pytest
from azure.servicebus import ServiceBusClient, ServiceBusMessage
from azure.servicebus.exceptions import ServiceBusQuotaExceededError

from conftest import serving


def test_premium_takes_a_message_of_2_mb_SEND_04(tmp_path):
    scenario = tmp_path / "premium.json"
    scenario.write_text(json.dumps({
        "version": 1,
        "namespace": {"tier": "Premium"},
        "entities": [{"queue": "big"}],
    }))
    with serving(tmp_path, scenario) as sbp:
        with ServiceBusClient.from_connection_string(sbp.connection_string) as client:
            with client.get_queue_sender("big") as sender:
                sender.send_messages(ServiceBusMessage(b"x" * (2 * 1024 * 1024)))
                with pytest.raises(ServiceBusQuotaExceededError, match="32 MB"):
                    sender.send_messages(ServiceBusMessage(b"y" * (40 * 1024 * 1024)))
            with client.get_queue_receiver("big") as receiver:
                (message,) = receiver.receive_messages(max_wait_time=5)
                assert len(b"".join(message.body)) == 2 * 1024 * 1024
                receiver.complete_message(message)
