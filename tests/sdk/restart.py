"""`sbp serve --state`: a restart loses no message (tests/sdk/run.sh runs it in two phases).

Usage: python restart.py send|receive "<connection string>"
"""
import sys

from azure.servicebus import ServiceBusClient, ServiceBusMessage

phase, conn = sys.argv[1], sys.argv[2]
with ServiceBusClient.from_connection_string(conn) as client:
    if phase == "send":
        with client.get_queue_sender("plain") as s:
            s.send_messages([ServiceBusMessage("kept-1"), ServiceBusMessage("kept-2")])
        print("ok   sent 2 messages before the restart")
    else:
        with client.get_queue_receiver("plain", max_wait_time=5) as r:
            got = r.receive_messages(max_message_count=5, max_wait_time=5)
            assert [str(m) for m in got] == ["kept-1", "kept-2"], [str(m) for m in got]
            assert [m.sequence_number for m in got] == [1, 2]
            for m in got:
                r.complete_message(m)
        print("ok   both are there after the restart, with their SequenceNumbers")
