"""What a test suite does against sbp serve, with the real Python SDK: entities made by
the test through ServiceBusAdministrationClient, the clock moved, the service's message
sizes and quotas, a reset between tests. Each test names the rule it relies on."""

from datetime import timedelta

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.servicebus import ServiceBusClient, ServiceBusMessage
from azure.servicebus.exceptions import (
    MessageLockLostError,
    MessageSizeExceededError,
    ServiceBusQuotaExceededError,
)
from azure.servicebus.management import (
    CorrelationRuleFilter,
    ServiceBusAdministrationClient,
    SqlRuleAction,
    SqlRuleFilter,
)


@pytest.fixture
def admin(sbp):
    with ServiceBusAdministrationClient.from_connection_string(
        sbp.admin_connection_string, connection_verify=sbp.certificate
    ) as client:
        yield client


@pytest.fixture
def client(sbp):
    with ServiceBusClient.from_connection_string(sbp.connection_string) as c:
        yield c


def test_a_queue_made_by_the_test_locks_and_lapses_on_the_moved_clock_RCV_02_RCV_07(sbp, admin, client):
    queue = admin.create_queue(
        "invoices", lock_duration=timedelta(seconds=30), max_delivery_count=2
    )
    assert queue.lock_duration == timedelta(seconds=30)
    assert queue.max_delivery_count == 2
    with client.get_queue_sender("invoices") as sender:
        sender.send_messages(ServiceBusMessage("invoice 1"))
    with client.get_queue_receiver("invoices") as receiver:
        for delivery in range(2):
            (message,) = receiver.receive_messages(max_wait_time=5)
            assert message.delivery_count == delivery
            # Not settled: the lock lapses on the moved clock (RCV-02, RCV-06).
            sbp.advance(seconds=31)
    # The second lapse meets MaxDeliveryCount 2: dead-lettered (RCV-07).
    runtime = admin.get_queue_runtime_properties("invoices")
    assert (runtime.active_message_count, runtime.dead_letter_message_count) == (0, 1)
    with client.get_queue_receiver("invoices", sub_queue="deadletter") as dlq:
        (dead,) = dlq.receive_messages(max_wait_time=5)
        assert dead.dead_letter_reason == "MaxDeliveryCountExceeded"
        dlq.complete_message(dead)


def test_entities_are_listed_read_changed_and_deleted_with_the_service_errors(sbp, admin):
    assert [q.name for q in admin.list_queues()] == ["orders"]
    admin.create_queue("a")
    with pytest.raises(ResourceExistsError):
        admin.create_queue("a")
    with pytest.raises(ResourceNotFoundError):
        admin.get_queue("nowhere")
    with pytest.raises(HttpResponseError, match="LockDuration"):
        admin.create_queue("b", lock_duration=timedelta(seconds=1))
    queue = admin.get_queue("a")
    queue.max_delivery_count = 7
    admin.update_queue(queue)
    assert admin.get_queue("a").max_delivery_count == 7
    admin.delete_queue("a")
    with pytest.raises(ResourceNotFoundError):
        admin.delete_queue("a")
    # Lists are paged as the SDK pages them (100 a page).
    for i in range(150):
        admin.create_queue(f"q{i:03}")
    assert len(list(admin.list_queues())) == 151
    assert admin.get_namespace_properties().messaging_sku == "Standard"


def test_a_subscription_s_rules_filter_what_it_gets_FLT_01_FLT_03(sbp, admin, client):
    admin.create_topic("payments")
    admin.create_subscription("payments", "large")
    admin.delete_rule("payments", "large", "$Default")
    admin.create_rule(
        "payments", "large", "over-100",
        filter=SqlRuleFilter("amount > 100"), action=SqlRuleAction("SET tier = 'gold'"),
    )
    admin.create_subscription("payments", "eu")
    admin.delete_rule("payments", "eu", "$Default")
    admin.create_rule(
        "payments", "eu", "eu", filter=CorrelationRuleFilter(properties={"region": "eu"})
    )
    assert [r.name for r in admin.list_rules("payments", "large")] == ["over-100"]
    with client.get_topic_sender("payments") as sender:
        sender.send_messages([
            ServiceBusMessage("small", application_properties={"amount": 5, "region": "eu"}),
            ServiceBusMessage("big", application_properties={"amount": 500, "region": "us"}),
        ])
    large = admin.get_subscription_runtime_properties("payments", "large")
    eu = admin.get_subscription_runtime_properties("payments", "eu")
    assert (large.active_message_count, eu.active_message_count) == (1, 1)
    with client.get_subscription_receiver("payments", "large") as receiver:
        (message,) = receiver.receive_messages(max_wait_time=5)
        assert str(message) == "big"
        assert message.application_properties[b"tier"] == b"gold"
        receiver.complete_message(message)


def test_message_sizes_are_the_tier_s_and_MaxSizeInMegabytes_is_a_quota_SEND_04(sbp, admin, client):
    admin.create_queue("small", max_size_in_megabytes=1)
    with client.get_queue_sender("small") as sender:
        # 256 KB is the largest message on Standard; the body leaves room for its headers.
        sender.send_messages(ServiceBusMessage(b"x" * (250 * 1024)))
        with pytest.raises(MessageSizeExceededError):
            sender.send_messages(ServiceBusMessage(b"x" * (300 * 1024)))
        for _ in range(3):
            sender.send_messages(ServiceBusMessage(b"y" * (250 * 1024)))
        # A fifth would pass the queue's 1 MB (MaxSizeInMegabytes): the quota error.
        with pytest.raises(ServiceBusQuotaExceededError):
            sender.send_messages(ServiceBusMessage(b"z" * (250 * 1024)))
    assert admin.get_queue_runtime_properties("small").active_message_count == 4


def test_a_reset_goes_back_to_the_served_entities(sbp, admin, client):
    admin.create_queue("temporary")
    with client.get_queue_sender("orders") as sender:
        sender.send_messages(ServiceBusMessage("left over"))
    sbp.reset()
    assert [q.name for q in admin.list_queues()] == ["orders"]
    assert admin.get_queue_runtime_properties("orders").active_message_count == 0


def test_a_message_kept_from_before_a_reset_settles_nothing_after_it(sbp, client):
    with client.get_queue_sender("orders") as sender:
        sender.send_messages(ServiceBusMessage("old"))
    with client.get_queue_receiver("orders") as before:
        (old,) = before.receive_messages(max_wait_time=5)
        sbp.reset()
        with client.get_queue_sender("orders") as sender:
            sender.send_messages(ServiceBusMessage("new"))
        with client.get_queue_receiver("orders") as after:
            (new,) = after.receive_messages(max_wait_time=5)
            # The fresh run's lock tokens are its own: the old message's lock is lost.
            assert old.lock_token != new.lock_token
            with pytest.raises(MessageLockLostError):
                before.complete_message(old)
            after.complete_message(new)
