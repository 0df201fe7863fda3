# -*- coding: utf-8 -*-
# Lapsed locks up to MaxDeliveryCount: written by the Service Bus Playground (azure-servicebus).
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



# A worker receives and crashes three times; each lock lapses, DeliveryCount rises, and at MaxDeliveryCount 3 the message moves to the DLQ as MaxDeliveryCountExceeded (RCV-06, RCV-07, MSG-02).

# The entities, with their settings as the playground created them.
admin.create_queue("orders", lock_duration=timedelta(milliseconds=5000), max_delivery_count=3)

# The timeline. SequenceNumbers are the playground's; a fresh entity numbers from 1 too.

# t=0s: send a message to orders
client.get_queue_sender("orders").send_messages(ServiceBusMessage("", message_id="poison"))
# playground: t=0s orders: #1 enqueued; ExpiresAt never (TTL-01)

time.sleep(1000 / 1000)  # on to t=1s

# t=1s: receive 1 from orders as worker
hold("orders", receiver("worker", "orders", ServiceBusReceiveMode.PEEK_LOCK).receive_messages(max_message_count=1, max_wait_time=1))
# playground: t=1s orders: worker starts receiving
# playground: t=1s orders: #1 locked by worker until t=6s (DeliveryCount 1) (RCV-02)

time.sleep(9000 / 1000)  # on to t=10s
# playground: t=6s orders: #1: lock lapsed without settlement (RCV-06)
# playground: t=6s orders: #1 back at its place in the queue (1 failed deliveries so far) (RCV-06)

# t=10s: receive 1 from orders as worker
hold("orders", receiver("worker", "orders", ServiceBusReceiveMode.PEEK_LOCK).receive_messages(max_message_count=1, max_wait_time=1))
# playground: t=10s orders: #1 locked by worker until t=15s (DeliveryCount 2, a redelivery) (RCV-02)

time.sleep(10000 / 1000)  # on to t=20s
# playground: t=15s orders: #1: lock lapsed without settlement (RCV-06)
# playground: t=15s orders: #1 back at its place in the queue (2 failed deliveries so far) (RCV-06)

# t=20s: receive 1 from orders as worker
hold("orders", receiver("worker", "orders", ServiceBusReceiveMode.PEEK_LOCK).receive_messages(max_message_count=1, max_wait_time=1))
# playground: t=20s orders: #1 locked by worker until t=25s (DeliveryCount 3, a redelivery) (RCV-02)

time.sleep(5000 / 1000)  # on to t=25s
# playground: t=25s orders: #1: lock lapsed without settlement (RCV-06)
# playground: t=25s orders: #1 dead-lettered: MaxDeliveryCountExceeded (Message could not be consumed after 3 delivery attempts.) (RCV-07)

for r in receivers.values():
    r.close()
client.close()
