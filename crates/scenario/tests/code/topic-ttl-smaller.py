# -*- coding: utf-8 -*-
# Topic TTL smaller than the subscription's: written by the Service Bus Playground (azure-servicebus).
# pip install azure-servicebus
import os
import sys
import time
from contextlib import ExitStack, contextmanager
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, TypeVar, Union

from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusReceivedMessage, ServiceBusReceiveMode, ServiceBusReceiver, ServiceBusSender
from azure.servicebus.management import ServiceBusAdministrationClient, CorrelationRuleFilter

# Your namespace's connection string; for the local emulator:
# Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;
CONNECTION = os.environ.get("SERVICEBUS_CONNECTION", "<connection string>")
# The administration calls run only with SERVICEBUS_ADMIN_CONNECTION, the management endpoint (not the messaging one): sbp serve FILE --no-entities --admin ADDR serves it over http (.NET), --admin-tls ADDR --tls-cert CERT over https (Python, JavaScript: trust CERT with REQUESTS_CA_BUNDLE or NODE_EXTRA_CA_CERTS), and this program then creates the entities. Without it the entities are taken as existing, as sbp serve FILE creates them from the file and the emulator from its Config.json.
ADMIN_CONNECTION = os.environ.get("SERVICEBUS_ADMIN_CONNECTION")
# SBP_SPEED=N runs the waits N times as fast, to go with sbp serve --speed N (against Azure or the emulator, leave it unset).
SPEED = float(os.environ.get("SBP_SPEED", "1"))
SAME = "as the playground showed"
DIFFERS = "DIFFERS"
SHOWED = "the playground showed"
RETURNED = "the broker returned"
NOT_CHECKED = "not checked"
ALL_SAME = "Every check as the playground showed."
SOME_DIFFER = "Checks that differ from the playground:"
EXISTING = "No SERVICEBUS_ADMIN_CONNECTION: the entities are taken as existing."
LOOP_FAILED = "A loop's operation failed, as it may in the playground too:"
NO_ERROR = "no error"
ERRORS = {"MessageLockLostError": "MessageLockLost", "SessionLockLostError": "SessionLockLost", "MessageNotFoundError": "MessageNotFound", "MessagingEntityNotFoundError": "MessagingEntityNotFound", "MessageSizeExceededError": "MessageSizeExceeded", "ServiceBusQuotaExceededError": "QuotaExceeded", "ServiceBusServerBusyError": "ServerBusy", "SessionCannotBeLockedError": "SessionCannotBeLocked", "OperationTimeoutError": "ServiceTimeout", "MessageAlreadySettled": "InvalidOperation", "ValueError": "InvalidOperation", "ServiceBusError": "InvalidOperation"}
# No retries: each call is one attempt, as each step of the playground is (the SDKs retry some errors by themselves, SessionCannotBeLocked among them, and the timeline would slip).
client = ServiceBusClient.from_connection_string(CONNECTION, retry_total=0)
admin = ServiceBusAdministrationClient.from_connection_string(ADMIN_CONNECTION) if ADMIN_CONNECTION else None
start = datetime.now(timezone.utc)
began = time.monotonic()
receivers: Dict[Tuple[str, str, ServiceBusReceiveMode], ServiceBusReceiver] = {}
senders: Dict[str, ServiceBusSender] = {}
calls: Dict[str, List[ServiceBusReceivedMessage]] = {}
scheduled: Dict[str, int] = {}
differences: List[str] = []
checking = [True]
# The senders and receivers the program opens, each closed with it at the end of main's `with`.
links = ExitStack()
if admin:
    links.callback(admin.close)


def receiver(name: str, path: str, mode: ServiceBusReceiveMode) -> ServiceBusReceiver:
    key = (name, path, mode)
    if key not in receivers:
        if "/subscriptions/" in path:
            topic, subscription = path.split("/subscriptions/")
            receivers[key] = links.enter_context(client.get_subscription_receiver(topic, subscription, receive_mode=mode))
        else:
            receivers[key] = links.enter_context(client.get_queue_receiver(path, receive_mode=mode))
    return receivers[key]


def sender(path: str, topic: bool) -> ServiceBusSender:
    if path not in senders:
        senders[path] = links.enter_context(client.get_topic_sender(path) if topic else client.get_queue_sender(path))
    return senders[path]


def wait_until(ms: int) -> None:
    delay = began + ms / 1000 / SPEED - time.monotonic()
    if delay > 0:
        time.sleep(delay)


def receive(r: ServiceBusReceiver, count: int, expected: int, until: int) -> List[ServiceBusReceivedMessage]:
    # Fewer messages than asked may come at a time: ask again until the expected ones are there, or until the next step's instant (`until`, ms after the start), so that it runs on time. The first call waits at least 1 s for an expected message (a receiver's link opens within it).
    got: List[ServiceBusReceivedMessage] = []
    deadline = began + until / 1000 / SPEED
    least = 1.0
    while True:
        wait = max(deadline - time.monotonic(), least) if len(got) < expected else 0.1
        least = 0.1
        got += r.receive_messages(max_message_count=count - len(got), max_wait_time=wait)
        if len(got) >= expected or len(got) >= count or time.monotonic() >= deadline:
            return got


def counted(path: str, showed: str, until: int) -> str:
    # What peek shows of an entity (RCV-11), by State: it locks nothing and changes no DeliveryCount.
    # Asked again until it is what the playground showed (the broker's instants lag the program's by its calls: opening a link takes the first send about half a second), or until the next step's instant, for at least 1 s (a lag of the wall clock's, whatever the speed).
    r = receiver("sbp-counts", path, ServiceBusReceiveMode.PEEK_LOCK)
    deadline = max(began + until / 1000 / SPEED, time.monotonic() + 1)
    while True:
        states: Dict[str, int] = {"active": 0, "deferred": 0, "scheduled": 0}
        next_seq = 1
        try:
            for _ in range(100):
                got = r.peek_messages(max_message_count=100, sequence_number=next_seq)
                if not got:
                    break
                for m in got:
                    state = str(m.state.name).lower()
                    states[state] = states.get(state, 0) + 1
                next_seq = (got[-1].sequence_number or 0) + 1
        except Exception as e:  # noqa: BLE001 - the error is what the broker returned
            return failure(e)
        shown = ", ".join(f"{k} {v}" for k, v in states.items())
        if shown == showed or time.monotonic() >= deadline:
            return shown
        time.sleep(0.1)


def present(exists: Callable[[], bool], showed: str, until: int) -> str:
    # Whether an entity exists, as the management API reads it (a read is no activity: it keeps nothing alive, IDLE-02).
    # Asked again until it is what the playground showed (the broker's instants lag the program's by its calls), or until the next step's instant, for at least 1 s (a lag of the wall clock's, whatever the speed).
    deadline = max(began + until / 1000 / SPEED, time.monotonic() + 1)
    while True:
        shown = str(exists()).lower()
        if shown == showed or time.monotonic() >= deadline:
            return shown
        time.sleep(0.1)


def peeked(path: str, seq: int) -> Optional[ServiceBusReceivedMessage]:
    # Message `seq` of an entity as peek shows it (RCV-11), or None where it is not there.
    got = receiver("sbp-counts", path, ServiceBusReceiveMode.PEEK_LOCK).peek_messages(max_message_count=1, sequence_number=seq)
    return got[0] if got and got[0].sequence_number == seq else None


def check(what: str, showed: str, returned: str) -> None:
    if not checking[0]:
        print(f"{NOT_CHECKED}: {what}: {returned}")
    elif showed == returned:
        print(f"{SAME}: {what}: {returned}")
    else:
        differences.append(what)
        print(f"{DIFFERS}: {what}: {SHOWED} {showed}, {RETURNED} {returned}")


@contextmanager
def step(what: str, expected: Optional[str] = None) -> Iterator[None]:
    # One step's calls as one checked attempt: an error the playground did not show (or none where it showed one) is a difference named with the step, and the program goes on.
    try:
        yield
    except Exception as e:  # noqa: BLE001 - the error is what the broker returned
        check(what, expected or NO_ERROR, failure(e))
    else:
        if expected is not None:
            check(what, expected, NO_ERROR)


def summary() -> None:
    # Every difference named, and exit code 1 if there is one.
    if differences:
        print(SOME_DIFFER, "; ".join(differences))
        sys.exit(1)
    print(ALL_SAME)


def message(call: str, i: int) -> Optional[ServiceBusReceivedMessage]:
    got = calls.get(call, [])
    if i < len(got):
        return got[i]
    check(f"{call}: message {i + 1}", "received", "not received")
    return None


def seq(call: str, i: int) -> int:
    m = message(call, i)
    return m.sequence_number or -1 if m else -1


def failure(e: Exception) -> str:
    return ERRORS.get(type(e).__name__, type(e).__name__)


T = TypeVar("T")


def found(get: Callable[..., T], *names: Any) -> Optional[T]:
    # An entity's properties, or None where the namespace does not have it (the service answers 404, or an entry without content).
    try:
        return get(*names)
    except HttpResponseError as e:
        if isinstance(e, ResourceNotFoundError) or e.status_code == 404:
            return None
        raise


def ms(d: Union[timedelta, str, None]) -> str:
    # A duration as the playground writes it, in ms (the SDK reads the service's ISO 8601 duration into a timedelta).
    if isinstance(d, timedelta):
        return str(d.days * 86400000 + d.seconds * 1000 + d.microseconds // 1000)
    return str(d)



# The topic's default TTL is 5 minutes, the subscription's 1 hour: the topic's applies (TTL-04, TOP-01).
# At each point the playground showed something (the messages received, their DeliveryCount and DeadLetterReason, a session, an error, and at its expectations the messages each entity holds by State and those it names, read with peek, and whether entities exist and their settings, read with the management API), the program checks what the broker returned and prints it; it exits with 1 if anything differs.
# The checks are apart from the program's calls: each step's calls are held by `with step(...)`, which turns an error into a check, and every other check is a line that calls check, counted, present or peeked. Without them, what is left is the program's own calls.

def main() -> None:
    with client, links:
        # The entities, with their settings as the playground created them.
        if admin:
            settings1 = found(admin.get_topic, "events")
            if settings1 is None:
                admin.create_topic("events", default_message_time_to_live=timedelta(milliseconds=300000))
                settings1 = admin.get_topic("events")
            check("events DefaultMessageTimeToLive (ms)", "300000", ms(settings1.default_message_time_to_live))
            check("events AutoDeleteOnIdle (ms)", "922337203685477", ms(settings1.auto_delete_on_idle))
            check("events RequiresDuplicateDetection", "false", str(settings1.requires_duplicate_detection).lower())
            settings2 = found(admin.get_subscription, "events", "audit")
            if settings2 is None:
                admin.create_subscription("events", "audit", default_message_time_to_live=timedelta(milliseconds=3600000), lock_duration=timedelta(milliseconds=30000), max_delivery_count=10, dead_lettering_on_message_expiration=True)
                settings2 = admin.get_subscription("events", "audit")
            check("events/subscriptions/audit DefaultMessageTimeToLive (ms)", "3600000", ms(settings2.default_message_time_to_live))
            check("events/subscriptions/audit LockDuration (ms)", "30000", ms(settings2.lock_duration))
            check("events/subscriptions/audit MaxDeliveryCount", "10", str(settings2.max_delivery_count))
            check("events/subscriptions/audit DeadLetteringOnMessageExpiration", "true", str(settings2.dead_lettering_on_message_expiration).lower())
            check("events/subscriptions/audit RequiresSession", "false", str(settings2.requires_session).lower())
            check("events/subscriptions/audit AutoDeleteOnIdle (ms)", "922337203685477", ms(settings2.auto_delete_on_idle))
            settings3 = found(admin.get_subscription, "events", "invoices")
            if settings3 is None:
                admin.create_subscription("events", "invoices", lock_duration=timedelta(milliseconds=30000), max_delivery_count=10)
                admin.delete_rule("events", "invoices", "$Default")
                admin.create_rule("events", "invoices", "$Default", filter=CorrelationRuleFilter(label="invoice"))
                settings3 = admin.get_subscription("events", "invoices")
            check("events/subscriptions/invoices DefaultMessageTimeToLive (ms)", "922337203685477", ms(settings3.default_message_time_to_live))
            check("events/subscriptions/invoices LockDuration (ms)", "30000", ms(settings3.lock_duration))
            check("events/subscriptions/invoices MaxDeliveryCount", "10", str(settings3.max_delivery_count))
            check("events/subscriptions/invoices DeadLetteringOnMessageExpiration", "false", str(settings3.dead_lettering_on_message_expiration).lower())
            check("events/subscriptions/invoices RequiresSession", "false", str(settings3.requires_session).lower())
            check("events/subscriptions/invoices AutoDeleteOnIdle (ms)", "922337203685477", ms(settings3.auto_delete_on_idle))
        else:
            print(EXISTING)

        # The timeline, each step at its instant after the program's start. Settlements use the messages this program received.

        # t=0s: send a message to events
        with step("t=0s: send a message to events"):
            sender("events", True).send_messages(ServiceBusMessage("", message_id="evt-1", subject="order"))
        # playground: t=0s events: #1 enqueued; ExpiresAt t=5m (TTL-01)
        # playground: t=0s events/subscriptions/audit: #1 enqueued; ExpiresAt t=5m (TOP-01)
        check("events/subscriptions/audit at t=0s: messages by State, as peek shows them (a locked message is active)", "active 1, deferred 0, scheduled 0", counted("events/subscriptions/audit", "active 1, deferred 0, scheduled 0", 299000))
        check("events/subscriptions/invoices at t=0s: messages by State, as peek shows them (a locked message is active)", "active 0, deferred 0, scheduled 0", counted("events/subscriptions/invoices", "active 0, deferred 0, scheduled 0", 299000))
        with step("events/subscriptions/audit #1 at t=0s, as peek shows it: peek"):
            m = peeked("events/subscriptions/audit", 1)
            check("events/subscriptions/audit #1 at t=0s, as peek shows it: DeliveryCount", "0", "not there" if m is None else ("" if m.delivery_count is None else str(m.delivery_count)))

        wait_until(299000)  # on to t=4m 59s
        check("events/subscriptions/audit at t=4m 59s: messages by State, as peek shows them (a locked message is active)", "active 1, deferred 0, scheduled 0", counted("events/subscriptions/audit", "active 1, deferred 0, scheduled 0", 300000))
        check("events/subscriptions/audit/$deadletterqueue at t=4m 59s: messages by State, as peek shows them (a locked message is active)", "active 0, deferred 0, scheduled 0", counted("events/subscriptions/audit/$deadletterqueue", "active 0, deferred 0, scheduled 0", 300000))

        wait_until(300000)  # on to t=5m
        # playground: t=5m events/subscriptions/audit: #1 dead-lettered: TTLExpiredException (The message expired and was dead lettered.) (TTL-11)
        check("events/subscriptions/audit at t=5m: messages by State, as peek shows them (a locked message is active)", "active 0, deferred 0, scheduled 0", counted("events/subscriptions/audit", "active 0, deferred 0, scheduled 0", 305000))
        check("events/subscriptions/audit/$deadletterqueue at t=5m: messages by State, as peek shows them (a locked message is active)", "active 1, deferred 0, scheduled 0", counted("events/subscriptions/audit/$deadletterqueue", "active 1, deferred 0, scheduled 0", 305000))

        summary()


if __name__ == "__main__":
    main()
