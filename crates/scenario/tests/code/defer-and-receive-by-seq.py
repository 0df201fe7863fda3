# -*- coding: utf-8 -*-
# Defer, then receive by sequence number: written by the Service Bus Playground (azure-servicebus).
# pip install azure-servicebus
import base64
import os
import time
import uuid
from datetime import datetime, timedelta, timezone
from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusReceiveMode, NEXT_AVAILABLE_SESSION
from azure.servicebus.management import ServiceBusAdministrationClient, CorrelationRuleFilter, SqlRuleFilter, SqlRuleAction, TrueRuleFilter

# Your namespace's connection string; for the local emulator:
# Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;
CONNECTION = os.environ.get("SERVICEBUS_CONNECTION", "<connection string>")
client = ServiceBusClient.from_connection_string(CONNECTION)
admin = ServiceBusAdministrationClient.from_connection_string(CONNECTION)
start = datetime.now(timezone.utc)
receivers = {}
held = {}
scheduled = {}


def receiver(name, path, mode):
    key = (name, path, mode)
    if key not in receivers:
        if "/subscriptions/" in path:
            topic, subscription = path.split("/subscriptions/")
            receivers[key] = client.get_subscription_receiver(topic, subscription, receive_mode=mode)
        else:
            receivers[key] = client.get_queue_receiver(path, receive_mode=mode)
    return receivers[key]


def hold(path, got):
    for m in got:
        held[f"{path}#{m.sequence_number}"] = m



# A deferred message stays in the queue, invisible to normal receive; it comes back only by its SequenceNumber, locked again with DeliveryCount + 1. An unknown number fails the call (RCV-09).

# The entities, with their settings as the playground created them.
admin.create_queue("orders", lock_duration=timedelta(milliseconds=30000), max_delivery_count=10)

# The timeline. SequenceNumbers are the playground's; a fresh entity numbers from 1 too.

# t=0s: send a message to orders
client.get_queue_sender("orders").send_messages(ServiceBusMessage("", message_id="step-2-of-order"))
# playground: t=0s orders: #1 enqueued; ExpiresAt never (TTL-01)

# t=0s: send a message to orders
client.get_queue_sender("orders").send_messages(ServiceBusMessage("", message_id="step-1-of-order"))
# playground: t=0s orders: #2 enqueued; ExpiresAt never (TTL-01)

time.sleep(1000 / 1000)  # on to t=1s

# t=1s: receive 1 from orders as receiver
hold("orders", receiver("receiver", "orders", ServiceBusReceiveMode.PEEK_LOCK).receive_messages(max_message_count=1, max_wait_time=1))
# playground: t=1s orders: receiver starts receiving
# playground: t=1s orders: #1 locked by receiver until t=31s (DeliveryCount 1) (RCV-02)

time.sleep(1000 / 1000)  # on to t=2s

# Step 2 arrived first: defer it until step 1 is done.
# t=2s: defer #1 in orders (receiver)
receiver("receiver", "orders", ServiceBusReceiveMode.PEEK_LOCK).defer_message(held["orders#1"])
# playground: t=2s orders: #1 deferred by receiver: only receivable by sequence number (RCV-09)

time.sleep(1000 / 1000)  # on to t=3s

# t=3s: receive 5 from orders as receiver
hold("orders", receiver("receiver", "orders", ServiceBusReceiveMode.PEEK_LOCK).receive_messages(max_message_count=5, max_wait_time=1))
# playground: t=3s orders: #2 locked by receiver until t=33s (DeliveryCount 1) (RCV-02)

time.sleep(1000 / 1000)  # on to t=4s

# t=4s: complete #2 in orders (receiver)
receiver("receiver", "orders", ServiceBusReceiveMode.PEEK_LOCK).complete_message(held["orders#2"])
# playground: t=4s orders: #2 completed by receiver (RCV-05)

time.sleep(1000 / 1000)  # on to t=5s

# t=5s: receive deferred #99 from orders
try:
    hold("orders", receiver("receiver", "orders", ServiceBusReceiveMode.PEEK_LOCK).receive_deferred_messages([99]))
except Exception as e:  # failed as expected
    print("failed as expected:", e)
# playground: t=5s orders: receive deferred failed: MessageNotFound

time.sleep(1000 / 1000)  # on to t=6s

# t=6s: receive deferred #1 from orders
hold("orders", receiver("receiver", "orders", ServiceBusReceiveMode.PEEK_LOCK).receive_deferred_messages([1]))
# playground: t=6s orders: #1 locked by receiver by sequence number until t=36s (DeliveryCount 2, a redelivery) (RCV-09)

time.sleep(1000 / 1000)  # on to t=7s

# t=7s: complete #1 in orders (receiver)
receiver("receiver", "orders", ServiceBusReceiveMode.PEEK_LOCK).complete_message(held["orders#1"])
# playground: t=7s orders: #1 completed by receiver (RCV-05)

for r in receivers.values():
    r.close()
client.close()
