"""A program of one's own, watched live in the browser (tests/e2e/run.mjs drives it): sends a
message, receives it under a lock and waits for the page to show it; completes it; receives a
second message and waits while the page moves the server's clock past its lock, then finds
that the lock was lost (MessageLockLostError).

Each phase prints a line and waits for a line on stdin before the next.

Usage: python live.py "<connection string>"
"""
import sys

from azure.servicebus import ServiceBusClient, ServiceBusMessage
from azure.servicebus.exceptions import MessageLockLostError


def say(line: str) -> None:
    print(line, flush=True)


def wait() -> None:
    sys.stdin.readline()


with ServiceBusClient.from_connection_string(sys.argv[1]) as client:
    with client.get_queue_sender("orders") as sender:
        sender.send_messages(ServiceBusMessage("watched", message_id="mine-1", application_properties={"n": 10}))
        sender.send_messages(ServiceBusMessage("lapses", message_id="mine-2"))
    with client.get_queue_receiver("orders", max_wait_time=5) as receiver:
        first = receiver.receive_messages(max_message_count=1)
        assert [m.message_id for m in first] == ["mine-1"], first
        say(f"locked {first[0].sequence_number}")
        wait()
        receiver.complete_message(first[0])
        say("completed")
        second = receiver.receive_messages(max_message_count=1)
        assert [m.message_id for m in second] == ["mine-2"], second
        say(f"locked {second[0].sequence_number}")
        wait()
        try:
            receiver.complete_message(second[0])
            say("settled: the lock had not lapsed")
        except MessageLockLostError:
            say("lock lost")
