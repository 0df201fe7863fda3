# -*- coding: utf-8 -*-
# Topic TTL smaller than the subscription's: written by the Service Bus Playground (azure-servicebus).
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



# The topic's default TTL is 5 minutes, the subscription's 1 hour: the topic's applies (TTL-04, TOP-01).

# The entities, with their settings as the playground created them.
admin.create_topic("events", default_message_time_to_live=timedelta(milliseconds=300000))
admin.create_subscription("events", "audit", default_message_time_to_live=timedelta(milliseconds=3600000), lock_duration=timedelta(milliseconds=30000), max_delivery_count=10, dead_lettering_on_message_expiration=True)
admin.create_subscription("events", "invoices", lock_duration=timedelta(milliseconds=30000), max_delivery_count=10)
admin.delete_rule("events", "invoices", "$Default")
admin.create_rule("events", "invoices", "$Default", filter=CorrelationRuleFilter(label="invoice"))

# The timeline. SequenceNumbers are the playground's; a fresh entity numbers from 1 too.

# t=0s: send a message to events
client.get_topic_sender("events").send_messages(ServiceBusMessage("", message_id="evt-1", subject="order"))
# playground: t=0s events: #1 enqueued; ExpiresAt t=5m (TTL-01)
# playground: t=0s events/subscriptions/audit: #1 enqueued; ExpiresAt t=5m (TOP-01)

time.sleep(300000 / 1000)  # on to t=5m
# playground: t=5m events/subscriptions/audit: #1 dead-lettered: TTLExpiredException (The message expired and was dead lettered.) (TTL-11)

for r in receivers.values():
    r.close()
client.close()
