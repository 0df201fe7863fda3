// The real JavaScript SDK (@azure/service-bus) against `sbp serve` (tests/sdk/run.sh starts it
// with tests/sdk/entities.json, on a fresh server after the Python checks' entities are
// drained: each check cleans up what it sends). A failure names the check.
// Usage: node sdk.mjs "<connection string>"
import { ServiceBusClient, isServiceBusError } from "@azure/service-bus";
import assert from "node:assert/strict";

const client = new ServiceBusClient(process.argv[2]);
const checks = [];
const check = (name, fn) => checks.push([name, fn]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function receiveOne(receiver) {
  const got = await receiver.receiveMessages(1, { maxWaitTimeInMs: 5000 });
  assert.equal(got.length, 1, "expected one message");
  return got[0];
}

check("send, receive and complete (RCV-02, RCV-05): typed properties, LockedUntil", async () => {
  const sender = client.createSender("plain");
  await sender.sendMessages({
    body: "hello",
    messageId: "js-1",
    subject: "greeting",
    applicationProperties: { n: 10, ratio: 0.5, ok: true, name: "x" },
    timeToLive: 5 * 60 * 1000,
  });
  await sender.close();
  const r = client.createReceiver("plain");
  const m = await receiveOne(r);
  assert.equal(m.body, "hello");
  assert.equal(m.messageId, "js-1");
  assert.equal(m.subject, "greeting");
  // JavaScript shows the raw AMQP delivery count: 0 on the first delivery (MSG-02).
  assert.equal(m.deliveryCount, 0);
  assert.deepEqual(m.applicationProperties, { n: 10, ratio: 0.5, ok: true, name: "x" });
  assert.ok(m.lockedUntilUtc > new Date(), `${m.lockedUntilUtc}`);
  assert.equal(m.timeToLive, 5 * 60 * 1000);
  await r.completeMessage(m);
  assert.equal((await r.receiveMessages(1, { maxWaitTimeInMs: 1000 })).length, 0);
  await r.close();
});

check("abandon and redelivery: DeliveryCount rises (RCV-05)", async () => {
  const sender = client.createSender("plain");
  await sender.sendMessages({ body: "again" });
  await sender.close();
  const r = client.createReceiver("plain");
  const m = await receiveOne(r);
  await r.abandonMessage(m);
  const m2 = await receiveOne(r);
  assert.equal(m2.sequenceNumber.toNumber(), m.sequenceNumber.toNumber());
  assert.equal(m2.deliveryCount, 1);
  await r.completeMessage(m2);
  await r.close();
});

check("dead-letter with reason, read from the dead-letter queue (RCV-05, DLQ-02)", async () => {
  const sender = client.createSender("plain");
  await sender.sendMessages({ body: "bad" });
  await sender.close();
  const r = client.createReceiver("plain");
  const m = await receiveOne(r);
  await r.deadLetterMessage(m, { deadLetterReason: "Invalid", deadLetterErrorDescription: "no customer" });
  await r.close();
  const d = client.createReceiver("plain", { subQueueType: "deadLetter" });
  const dm = await receiveOne(d);
  assert.equal(dm.deadLetterReason, "Invalid");
  assert.equal(dm.deadLetterErrorDescription, "no customer");
  await d.completeMessage(dm);
  await d.close();
});

check("defer, then receive by sequence number (RCV-09)", async () => {
  const sender = client.createSender("plain");
  await sender.sendMessages({ body: "later" });
  await sender.close();
  const r = client.createReceiver("plain");
  const m = await receiveOne(r);
  await r.deferMessage(m);
  const [dm] = await r.receiveDeferredMessages(m.sequenceNumber);
  assert.equal(dm.body, "later");
  await r.completeMessage(dm);
  await r.close();
});

check("renew a lock; a lapsed lock is MessageLockLost (RCV-04, RCV-08)", async () => {
  const sender = client.createSender("orders");
  await sender.sendMessages({ body: "slow" });
  await sender.close();
  // The JavaScript receiver renews locks by itself unless told not to.
  const r = client.createReceiver("orders", { maxAutoLockRenewalDurationInMs: 0 });
  const m = await receiveOne(r);
  const before = m.lockedUntilUtc;
  await sleep(1000);
  const after = await r.renewMessageLock(m);
  assert.ok(after > before, `${before} ${after}`);
  await sleep(6500); // LockDuration 5 s
  await assert.rejects(r.completeMessage(m), (e) => isServiceBusError(e) && e.code === "MessageLockLost");
  const again = await receiveOne(r);
  assert.equal(again.deliveryCount, 1);
  await r.completeMessage(again);
  await r.close();
});

check("peek, schedule and cancel (RCV-11, SCH-01)", async () => {
  const sender = client.createSender("plain");
  const at = new Date(Date.now() + 3600 * 1000);
  const seqs = await sender.scheduleMessages([{ body: "a" }, { body: "b" }], at);
  assert.equal(seqs.length, 2);
  await sender.cancelScheduledMessages(seqs[0]);
  await sender.close();
  const r = client.createReceiver("plain");
  const peeked = await r.peekMessages(100);
  const scheduled = peeked.filter((p) => seqs.some((s) => s.equals(p.sequenceNumber)));
  assert.deepEqual(scheduled.map((p) => p.body), ["b"]);
  assert.ok(Math.abs(scheduled[0].scheduledEnqueueTimeUtc - at) < 1000);
  await r.close();
});

check("receive-and-delete (RCV-01)", async () => {
  const sender = client.createSender("plain");
  await sender.sendMessages({ body: "once" });
  await sender.close();
  const r = client.createReceiver("plain", { receiveMode: "receiveAndDelete" });
  const m = await receiveOne(r);
  assert.equal(m.body, "once");
  assert.equal((await r.receiveMessages(1, { maxWaitTimeInMs: 1000 })).length, 0);
  await r.close();
});

check("a topic's SQL filter compares typed properties (TOP-01, FLT-03)", async () => {
  const sender = client.createSender("events");
  await sender.sendMessages([
    { body: "large", applicationProperties: { quantity: 250 } },
    { body: "text", applicationProperties: { quantity: "250" } },
  ]);
  await sender.close();
  const r = client.createReceiver("events", "big");
  const got = await r.receiveMessages(10, { maxWaitTimeInMs: 3000 });
  assert.deepEqual(got.map((m) => m.body), ["large"]);
  for (const m of got) await r.completeMessage(m);
  await r.close();
  const all = client.createReceiver("events", "all", { receiveMode: "receiveAndDelete" });
  let n = 0;
  while (n < 2) {
    const more = await all.receiveMessages(10, { maxWaitTimeInMs: 3000 });
    assert.ok(more.length > 0, "the all subscription has both");
    n += more.length;
  }
  await all.close();
});

check("sessions: a named and the next available session, in order, with state (SES-01..05)", async () => {
  const sender = client.createSender("carts");
  await sender.sendMessages([
    { body: "a1", sessionId: "alice" },
    { body: "b1", sessionId: "bob" },
    { body: "a2", sessionId: "alice" },
  ]);
  await assert.rejects(sender.sendMessages({ body: "no session" }));
  await sender.close();
  const alice = await client.acceptSession("carts", "alice");
  assert.equal(alice.sessionId, "alice");
  assert.ok(alice.sessionLockedUntilUtc > new Date());
  const got = await alice.receiveMessages(5, { maxWaitTimeInMs: 3000 });
  assert.deepEqual(got.map((m) => m.body), ["a1", "a2"]);
  await alice.setSessionState("step-1");
  assert.equal(String(await alice.getSessionState()), "step-1");
  const before = alice.sessionLockedUntilUtc;
  await sleep(1000);
  await alice.renewSessionLock();
  assert.ok(alice.sessionLockedUntilUtc > before);
  for (const m of got) await alice.completeMessage(m);
  await alice.close();
  const next = await client.acceptNextSession("carts");
  assert.equal(next.sessionId, "bob");
  const [b] = await next.receiveMessages(1, { maxWaitTimeInMs: 3000 });
  assert.equal(b.body, "b1");
  await next.completeMessage(b);
  await next.close();
});

check("bodies come back in the section they were sent in: data, value, sequence", async () => {
  const sender = client.createSender("plain");
  await sender.sendMessages({ body: { order: 7 } });
  await sender.sendMessages({ body: { order: 8 }, bodyType: "value" });
  await sender.sendMessages({ body: [[1, "a"]], bodyType: "sequence" });
  await sender.close();
  const r = client.createReceiver("plain");
  const got = [];
  while (got.length < 3) {
    const more = await r.receiveMessages(3 - got.length, { maxWaitTimeInMs: 5000 });
    assert.ok(more.length > 0, `got ${got.length} of 3 messages`);
    got.push(...more);
  }
  const [data, value, sequence] = got;
  assert.equal(data._rawAmqpMessage.bodyType, "data");
  assert.deepEqual(data.body, { order: 7 });
  assert.equal(value._rawAmqpMessage.bodyType, "value");
  assert.deepEqual(value.body, { order: 8 });
  assert.equal(sequence._rawAmqpMessage.bodyType, "sequence");
  assert.deepEqual(sequence.body, [[1, "a"]]);
  for (const m of got) await r.completeMessage(m);
  await r.close();
});

check("an unknown entity is MessagingEntityNotFound (IDLE-04)", async () => {
  const sender = client.createSender("nope-js");
  await assert.rejects(
    sender.sendMessages({ body: "x" }),
    (e) => isServiceBusError(e) && e.code === "MessagingEntityNotFound",
  );
  await sender.close();
});

let failed = 0;
for (const [name, fn] of checks) {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e && e.stack ? e.stack.split("\n").slice(0, 3).join(" | ") : e}`);
  }
}
console.log(`${checks.length - failed} passed, ${failed} failed`);
await client.close();
process.exit(failed ? 1 : 0);
