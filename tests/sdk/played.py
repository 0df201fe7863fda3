"""`sbp serve preset:ttl-expiry-to-dlq --play`: the preset ran to its end (t=30s) before serving,
so the SDK finds its message dead-lettered as TTLExpiredException (TTL-11).

Usage: python played.py "<connection string>"
"""
import sys

from azure.servicebus import ServiceBusClient, ServiceBusSubQueue

with ServiceBusClient.from_connection_string(sys.argv[1]) as client:
    with client.get_queue_receiver("orders", sub_queue=ServiceBusSubQueue.DEAD_LETTER, max_wait_time=5) as r:
        got = r.peek_messages(max_message_count=5)
        assert [(m.sequence_number, m.dead_letter_reason) for m in got] == [(1, "TTLExpiredException")], got
print("ok   --play: the preset's expired message is in the dead-letter queue")
