"""The real Python SDK (azure-servicebus) against `sbp serve` (tests/sdk/run.sh starts it with
tests/sdk/entities.json). Each check asserts what the SDK returns; a failure names the check.

Usage: python python_sdk.py "<connection string>"
"""
import datetime
import sys
import time
import uuid

from azure.servicebus import (
    NEXT_AVAILABLE_SESSION,
    ServiceBusClient,
    ServiceBusMessage,
    ServiceBusReceiveMode,
    ServiceBusSubQueue,
)
from azure.servicebus.amqp import AmqpAnnotatedMessage, AmqpMessageBodyType
from azure.servicebus.exceptions import (
    MessageLockLostError,
    MessagingEntityNotFoundError,
    ServiceBusError,
)

CONN = sys.argv[1]
CHECKS = []


def check(name):
    def wrap(fn):
        CHECKS.append((name, fn))
        return fn

    return wrap


def receive_one(client, queue, **kw):
    with client.get_queue_receiver(queue, max_wait_time=5, **kw) as r:
        got = r.receive_messages(max_message_count=1, max_wait_time=5)
        assert len(got) == 1, f"expected 1 message from {queue}, got {len(got)}"
        return r, got[0]


@check("send, receive and complete (RCV-02, RCV-05): SequenceNumber, LockedUntil, typed properties")
def send_receive_complete(client):
    with client.get_queue_sender("plain") as s:
        s.send_messages(
            ServiceBusMessage(
                "hello",
                message_id="m-1",
                subject="greeting",
                application_properties={"n": 10, "big": 2**31 - 1, "ratio": 0.5, "ok": True, "name": "x"},
                time_to_live=datetime.timedelta(minutes=5),
            )
        )
    with client.get_queue_receiver("plain", max_wait_time=5) as r:
        [m] = r.receive_messages(max_message_count=1, max_wait_time=5)
        assert str(m) == "hello", str(m)
        assert m.message_id == "m-1" and m.subject == "greeting"
        assert m.sequence_number >= 1
        # Python shows the raw AMQP delivery count: 0 on the first delivery (MSG-02).
        assert m.delivery_count == 0, m.delivery_count
        now = datetime.datetime.now(datetime.timezone.utc)
        assert now < m.locked_until_utc <= now + datetime.timedelta(seconds=31), m.locked_until_utc
        # The Python SDK's own decoder hands AMQP strings over as bytes (keys and values).
        text = lambda v: v.decode() if isinstance(v, bytes) else v  # noqa: E731
        props = {text(k): text(v) for k, v in m.application_properties.items()}
        assert props == {"n": 10, "big": 2**31 - 1, "ratio": 0.5, "ok": True, "name": "x"}, props
        assert type(props["n"]) is int and type(props["ratio"]) is float and type(props["ok"]) is bool
        assert m.time_to_live == datetime.timedelta(minutes=5), m.time_to_live
        r.complete_message(m)
        assert r.receive_messages(max_message_count=1, max_wait_time=1) == []


@check("abandon and redelivery: DeliveryCount rises (RCV-05, RCV-06)")
def abandon(client):
    with client.get_queue_sender("plain") as s:
        s.send_messages(ServiceBusMessage("again"))
    with client.get_queue_receiver("plain", max_wait_time=5) as r:
        [m] = r.receive_messages(max_message_count=1, max_wait_time=5)
        r.abandon_message(m)
        [m2] = r.receive_messages(max_message_count=1, max_wait_time=5)
        assert m2.sequence_number == m.sequence_number
        assert m2.delivery_count == 1, m2.delivery_count
        assert m2.lock_token != m.lock_token
        r.complete_message(m2)


@check("dead-letter with reason and description, read from the dead-letter queue (RCV-05, DLQ-02)")
def dead_letter(client):
    with client.get_queue_sender("plain") as s:
        s.send_messages(ServiceBusMessage("bad"))
    with client.get_queue_receiver("plain", max_wait_time=5) as r:
        [m] = r.receive_messages(max_message_count=1, max_wait_time=5)
        r.dead_letter_message(m, reason="Invalid", error_description="no customer")
    with client.get_queue_receiver("plain", sub_queue=ServiceBusSubQueue.DEAD_LETTER, max_wait_time=5) as d:
        [dm] = d.receive_messages(max_message_count=1, max_wait_time=5)
        assert dm.dead_letter_reason == "Invalid", dm.dead_letter_reason
        assert dm.dead_letter_error_description == "no customer"
        assert str(dm) == "bad"
        d.complete_message(dm)


@check("MaxDeliveryCount: the third abandon dead-letters as MaxDeliveryCountExceeded (RCV-07)")
def max_delivery(client):
    with client.get_queue_sender("orders") as s:
        s.send_messages(ServiceBusMessage("poison", message_id="poison"))
    with client.get_queue_receiver("orders", max_wait_time=5) as r:
        for _ in range(3):
            [m] = r.receive_messages(max_message_count=1, max_wait_time=5)
            r.abandon_message(m)
    with client.get_queue_receiver("orders", sub_queue=ServiceBusSubQueue.DEAD_LETTER, max_wait_time=5) as d:
        [dm] = d.receive_messages(max_message_count=1, max_wait_time=5)
        assert dm.message_id == "poison"
        assert dm.dead_letter_reason == "MaxDeliveryCountExceeded", dm.dead_letter_reason
        d.complete_message(dm)


@check("defer, then receive by sequence number (RCV-09)")
def defer(client):
    with client.get_queue_sender("plain") as s:
        s.send_messages(ServiceBusMessage("later"))
    with client.get_queue_receiver("plain", max_wait_time=5) as r:
        [m] = r.receive_messages(max_message_count=1, max_wait_time=5)
        seq = m.sequence_number
        r.defer_message(m)
        assert r.receive_messages(max_message_count=1, max_wait_time=1) == []
        [dm] = r.receive_deferred_messages([seq])
        assert dm.sequence_number == seq and str(dm) == "later"
        r.complete_message(dm)


@check("renew a lock; a lapsed lock is MessageLockLostError (RCV-04, RCV-08)")
def renew_and_lapse(client):
    with client.get_queue_sender("orders") as s:
        s.send_messages(ServiceBusMessage("slow"))
    with client.get_queue_receiver("orders", max_wait_time=5) as r:
        [m] = r.receive_messages(max_message_count=1, max_wait_time=5)
        before = m.locked_until_utc
        time.sleep(1)
        after = r.renew_message_lock(m)
        assert after > before, (before, after)
        time.sleep(6.5)  # LockDuration 5 s
        try:
            r.complete_message(m)
            raise AssertionError("complete after the lock lapsed succeeded")
        except MessageLockLostError:
            pass
        [again] = r.receive_messages(max_message_count=1, max_wait_time=5)
        assert again.delivery_count == 1, again.delivery_count
        r.complete_message(again)


@check("peek shows without locking (RCV-11)")
def peek(client):
    with client.get_queue_sender("plain") as s:
        s.send_messages([ServiceBusMessage("p1"), ServiceBusMessage("p2")])
    with client.get_queue_receiver("plain", max_wait_time=5) as r:
        peeked = r.peek_messages(max_message_count=10)
        assert [str(p) for p in peeked][-2:] == ["p1", "p2"], [str(p) for p in peeked]
        assert all(p.delivery_count == 0 for p in peeked[-2:])
        got = r.receive_messages(max_message_count=2, max_wait_time=5)
        while len(got) < 2:
            got += r.receive_messages(max_message_count=2 - len(got), max_wait_time=5)
        for m in got:
            r.complete_message(m)


@check("schedule and cancel (SCH-01, TTL-05)")
def schedule(client):
    with client.get_queue_sender("plain") as s:
        at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
        seqs = s.schedule_messages([ServiceBusMessage("a"), ServiceBusMessage("b")], at)
        assert len(seqs) == 2 and seqs[0] != seqs[1], seqs
        s.cancel_scheduled_messages(seqs[0])
    with client.get_queue_receiver("plain", max_wait_time=5) as r:
        peeked = r.peek_messages(max_message_count=100)
        scheduled = [p for p in peeked if p.sequence_number in seqs]
        assert [p.sequence_number for p in scheduled] == [seqs[1]], scheduled
        assert abs((scheduled[0].scheduled_enqueue_time_utc - at).total_seconds()) < 1
        assert r.receive_messages(max_message_count=1, max_wait_time=1) == []


@check("receive-and-delete: no lock, gone at once (RCV-01)")
def receive_and_delete(client):
    with client.get_queue_sender("plain") as s:
        s.send_messages(ServiceBusMessage("once"))
    with client.get_queue_receiver(
        "plain", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE, max_wait_time=5
    ) as r:
        [m] = r.receive_messages(max_message_count=1, max_wait_time=5)
        assert str(m) == "once"
        assert r.receive_messages(max_message_count=1, max_wait_time=1) == []


@check("a topic's SQL filter compares typed properties (TOP-01, FLT-03)")
def topic_filter(client):
    with client.get_topic_sender("events") as s:
        s.send_messages(
            [
                ServiceBusMessage("large", application_properties={"quantity": 250}),
                ServiceBusMessage("text", application_properties={"quantity": "250"}),
                ServiceBusMessage("small", application_properties={"quantity": 3}),
            ]
        )
    with client.get_subscription_receiver("events", "big", max_wait_time=5) as r:
        got = r.receive_messages(max_message_count=10, max_wait_time=5)
        assert [str(m) for m in got] == ["large"], [str(m) for m in got]
        for m in got:
            r.complete_message(m)
    with client.get_subscription_receiver("events", "all", max_wait_time=5) as r:
        got = r.receive_messages(max_message_count=10, max_wait_time=5)
        while len(got) < 3:
            more = r.receive_messages(max_message_count=10, max_wait_time=5)
            assert more, [str(m) for m in got]
            got += more
        assert sorted(str(m) for m in got) == ["large", "small", "text"]
        for m in got:
            r.complete_message(m)


@check("sessions: a named and the next available session, in order, with state and a renewed lock (SES-01..05)")
def sessions(client):
    with client.get_queue_sender("carts") as s:
        s.send_messages(
            [
                ServiceBusMessage("a1", session_id="alice"),
                ServiceBusMessage("b1", session_id="bob"),
                ServiceBusMessage("a2", session_id="alice"),
            ]
        )
        try:
            s.send_messages(ServiceBusMessage("no session"))
            raise AssertionError("a send without SessionId to a session queue succeeded")
        except ServiceBusError:
            pass
    with client.get_queue_receiver("carts", session_id="alice", max_wait_time=5) as r:
        assert r.session.session_id == "alice"
        now = datetime.datetime.now(datetime.timezone.utc)
        assert now < r.session.locked_until_utc <= now + datetime.timedelta(seconds=31), r.session.locked_until_utc
        got = r.receive_messages(max_message_count=5, max_wait_time=5)
        assert [str(m) for m in got] == ["a1", "a2"], [str(m) for m in got]
        assert all(m.session_id == "alice" for m in got)
        r.session.set_state("step-1")
        assert r.session.get_state() == b"step-1", r.session.get_state()
        before = r.session.locked_until_utc
        time.sleep(1)
        r.session.renew_lock()
        assert r.session.locked_until_utc > before, (before, r.session.locked_until_utc)
        for m in got:
            r.complete_message(m)
    with client.get_queue_receiver("carts", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=5) as r:
        assert r.session.session_id == "bob", r.session.session_id
        [m] = r.receive_messages(max_message_count=1, max_wait_time=5)
        assert str(m) == "b1"
        r.complete_message(m)
    # The state outlives the holder (SES-05), and it is bytes, kept as they are.
    with client.get_queue_receiver("carts", session_id="alice", max_wait_time=5) as r:
        assert r.session.get_state() == b"step-1"
        r.session.set_state(b"\xff\x00not text\xfe")
    with client.get_queue_receiver("carts", session_id="alice", max_wait_time=5) as r:
        assert r.session.get_state() == b"\xff\x00not text\xfe", r.session.get_state()


@check("bodies come back in the section they were sent in: data, amqp-value, amqp-sequence")
def body_sections(client):
    with client.get_queue_sender("plain") as s:
        s.send_messages(ServiceBusMessage(b"\x00\xffbytes"))
        s.send_messages(AmqpAnnotatedMessage(value_body={"n": 7, "name": "x"}))
        s.send_messages(AmqpAnnotatedMessage(value_body="a string value"))
        s.send_messages(AmqpAnnotatedMessage(sequence_body=[[1, "a"], [2, "b"]]))
    with client.get_queue_receiver("plain", max_wait_time=5) as r:
        got = []
        while len(got) < 4:
            more = r.receive_messages(max_message_count=4 - len(got), max_wait_time=5)
            assert more, f"got {len(got)} of 4 messages"
            got += more
        data, mapped, text, seq = got
        # The Python SDK's own decoder hands AMQP strings over as bytes.
        text_of = lambda v: v.decode() if isinstance(v, bytes) else v  # noqa: E731
        assert data.body_type == AmqpMessageBodyType.DATA, data.body_type
        assert b"".join(data.body) == b"\x00\xffbytes", list(data.body)
        assert mapped.body_type == AmqpMessageBodyType.VALUE, mapped.body_type
        assert {text_of(k): text_of(v) for k, v in mapped.body.items()} == {"n": 7, "name": "x"}, mapped.body
        assert text.body_type == AmqpMessageBodyType.VALUE and text_of(text.body) == "a string value", text.body
        assert seq.body_type == AmqpMessageBodyType.SEQUENCE, seq.body_type
        lists = [[text_of(v) for v in section] for section in seq.body]
        assert lists == [[1, "a"], [2, "b"]], lists
        for m in got:
            r.complete_message(m)


@check("an unknown entity is MessagingEntityNotFoundError (IDLE-04)")
def unknown(client):
    try:
        with client.get_queue_sender("nope-" + uuid.uuid4().hex[:6]) as s:
            s.send_messages(ServiceBusMessage("x"))
        raise AssertionError("sending to an unknown queue succeeded")
    except MessagingEntityNotFoundError:
        pass
    except ServiceBusError as e:
        raise AssertionError(f"expected MessagingEntityNotFoundError, got {type(e).__name__}: {e}")


def main():
    failed = 0
    with ServiceBusClient.from_connection_string(CONN) as client:
        for name, fn in CHECKS:
            try:
                fn(client)
                print(f"ok   {name}")
            except Exception as e:  # noqa: BLE001 - every failure is reported by name
                failed += 1
                print(f"FAIL {name}: {type(e).__name__}: {e}")
    print(f"{len(CHECKS) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
