"""Throughput and latency of `sbp serve` with the real Python SDK, on loopback (docs/PERFORMANCE.md).

Usage: python bench.py "<connection string>" [messages]
Prints: messages sent per second (batches of 100), received and completed per second (one
receiver, batches of up to 100), and the median and 95th percentile of a single message's
round trip (send, then receive) over 200 tries.
"""
import statistics
import sys
import time

from azure.servicebus import ServiceBusClient, ServiceBusMessage

conn = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000

with ServiceBusClient.from_connection_string(conn) as client:
    with client.get_queue_sender("orders") as s, client.get_queue_receiver("orders", max_wait_time=5) as r:
        t = time.perf_counter()
        for i in range(0, n, 100):
            s.send_messages([ServiceBusMessage(f"m{j}") for j in range(i, min(i + 100, n))])
        sent = n / (time.perf_counter() - t)
        t = time.perf_counter()
        done = 0
        while done < n:
            got = r.receive_messages(max_message_count=100, max_wait_time=5)
            assert got, f"only {done} of {n} came back"
            for m in got:
                r.complete_message(m)
            done += len(got)
        completed = n / (time.perf_counter() - t)
        rounds = []
        for _ in range(200):
            t = time.perf_counter()
            s.send_messages(ServiceBusMessage("ping"))
            [m] = r.receive_messages(max_message_count=1, max_wait_time=5)
            rounds.append((time.perf_counter() - t) * 1000)
            r.complete_message(m)
        rounds.sort()
        print(f"sent {sent:.0f} msg/s; received+completed {completed:.0f} msg/s; "
              f"send->receive median {statistics.median(rounds):.1f} ms, p95 {rounds[int(len(rounds) * 0.95)]:.1f} ms")
