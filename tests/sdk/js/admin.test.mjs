// What a JavaScript test suite does against sbp serve (Vitest), with the real SDK: entities
// made through ServiceBusAdministrationClient, the clock moved, the service's message sizes,
// the service's errors, a reset between tests. Run: SBP=path/to/sbp npx vitest run
import { ServiceBusAdministrationClient, ServiceBusClient, isServiceBusError } from "@azure/service-bus";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { startSbp } from "./sbp.mjs";

let sbp, admin, client;
beforeAll(async () => {
  sbp = await startSbp();
  admin = new ServiceBusAdministrationClient(sbp.adminConnectionString, { tlsOptions: sbp.tlsOptions });
  client = new ServiceBusClient(sbp.connectionString);
});
afterAll(async () => {
  await client.close();
  await sbp.stop();
});
beforeEach(() => sbp.reset());

describe("sbp serve in a Vitest suite", () => {
  test("a queue made by the test locks, and its lock lapses on the moved clock (RCV-02, RCV-07)", async () => {
    const made = await admin.createQueue("invoices", { lockDuration: "PT30S", maxDeliveryCount: 2 });
    expect(made.lockDuration).toBe("PT30S");
    expect(made.maxDeliveryCount).toBe(2);
    await client.createSender("invoices").sendMessages({ body: "invoice 1" });
    const receiver = client.createReceiver("invoices");
    for (const delivery of [0, 1]) {
      const [message] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 5000 });
      expect(message.deliveryCount).toBe(delivery);
      await sbp.advance(31);
    }
    await receiver.close();
    const runtime = await admin.getQueueRuntimeProperties("invoices");
    expect([runtime.activeMessageCount, runtime.deadLetterMessageCount]).toEqual([0, 1]);
  });

  test("entities are listed, read, changed and deleted, with the service's errors", async () => {
    const names = [];
    for await (const q of admin.listQueues()) names.push(q.name);
    expect(names).toEqual(["orders"]);
    await admin.createQueue("a");
    await expect(admin.createQueue("a")).rejects.toMatchObject({ code: "MessageEntityAlreadyExistsError" });
    await expect(admin.getQueue("nowhere")).rejects.toMatchObject({ code: "MessageEntityNotFoundError" });
    expect(await admin.queueExists("a")).toBe(true);
    expect(await admin.queueExists("nowhere")).toBe(false);
    await expect(admin.createQueue("b", { lockDuration: "PT1S" })).rejects.toThrow(/LockDuration/);
    const queue = await admin.getQueue("a");
    await admin.updateQueue({ ...queue, maxDeliveryCount: 7 });
    expect((await admin.getQueue("a")).maxDeliveryCount).toBe(7);
    await admin.deleteQueue("a");
    await expect(admin.deleteQueue("a")).rejects.toMatchObject({ code: "MessageEntityNotFoundError" });
    for (let i = 0; i < 120; i++) await admin.createQueue(`q${String(i).padStart(3, "0")}`);
    let listed = 0;
    for await (const _ of admin.listQueues()) listed++;
    expect(listed).toBe(121);
    expect((await admin.getNamespaceProperties()).messagingSku).toBe("Standard");
  });

  test("a subscription's rules filter what it gets (FLT-01, FLT-02)", async () => {
    await admin.createTopic("payments");
    await admin.createSubscription("payments", "eu", {
      defaultRuleOptions: { name: "eu", filter: { applicationProperties: { region: "eu" } } },
    });
    await admin.createRule("payments", "eu", "big", { sqlExpression: "amount > 100" });
    const rules = [];
    for await (const r of admin.listRules("payments", "eu")) rules.push(r.name);
    expect(rules).toEqual(["eu", "big"]);
    await client.createSender("payments").sendMessages([
      { body: "eu", applicationProperties: { region: "eu", amount: 1 } },
      { body: "big", applicationProperties: { region: "us", amount: 500 } },
      { body: "neither", applicationProperties: { region: "us", amount: 1 } },
    ]);
    const runtime = await admin.getSubscriptionRuntimeProperties("payments", "eu");
    expect(runtime.activeMessageCount).toBe(2);
  });

  test("a message past 256 KB is refused with the SDK's size error; the queue's size is a quota (SEND-04)", async () => {
    await admin.createQueue("small", { maxSizeInMegabytes: 1 });
    const sender = client.createSender("small");
    await sender.sendMessages({ body: Buffer.alloc(250 * 1024) });
    const tooLarge = await sender.sendMessages({ body: Buffer.alloc(300 * 1024) }).catch((e) => e);
    expect(isServiceBusError(tooLarge) && tooLarge.code).toBe("MessageSizeExceeded");
    for (let i = 0; i < 3; i++) await sender.sendMessages({ body: Buffer.alloc(250 * 1024) });
    const full = await sender.sendMessages({ body: Buffer.alloc(250 * 1024) }).catch((e) => e);
    expect(isServiceBusError(full) && full.code).toBe("QuotaExceeded");
    await sender.close();
  });
});
