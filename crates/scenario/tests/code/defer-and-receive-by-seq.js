// Defer, then receive by sequence number: written by the Service Bus Playground (@azure/service-bus).
// npm install @azure/service-bus long
const { ServiceBusClient, ServiceBusAdministrationClient } = require("@azure/service-bus");
const Long = require("long");

// Your namespace's connection string; for the local emulator:
// Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;
const connection = process.env.SERVICEBUS_CONNECTION || "<connection string>";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
    const client = new ServiceBusClient(connection);
    const admin = new ServiceBusAdministrationClient(connection);
    const start = Date.now();
    const receivers = new Map();
    const held = new Map();
    const scheduled = new Map();
    const receiver = (name, path, mode) => {
        const key = `${name}|${path}|${mode}`;
        if (!receivers.has(key)) {
            const [topic, subscription] = path.split("/subscriptions/");
            receivers.set(key, subscription
                ? client.createReceiver(topic, subscription, { receiveMode: mode })
                : client.createReceiver(path, { receiveMode: mode }));
        }
        return receivers.get(key);
    };
    const hold = (path, got) => got.forEach((m) => held.set(`${path}#${m.sequenceNumber}`, m));

    // A deferred message stays in the queue, invisible to normal receive; it comes back only by its SequenceNumber, locked again with DeliveryCount + 1. An unknown number fails the call (RCV-09).

    // The entities, with their settings as the playground created them.
    await admin.createQueue("orders", { lockDuration: "PT30S", maxDeliveryCount: 10 });

    // The timeline. SequenceNumbers are the playground's; a fresh entity numbers from 1 too.

    // t=0s: send a message to orders
    await client.createSender("orders").sendMessages({ body: "", messageId: "step-2-of-order" });
    // playground: t=0s orders: #1 enqueued; ExpiresAt never (TTL-01)

    // t=0s: send a message to orders
    await client.createSender("orders").sendMessages({ body: "", messageId: "step-1-of-order" });
    // playground: t=0s orders: #2 enqueued; ExpiresAt never (TTL-01)

    await sleep(1000); // on to t=1s

    // t=1s: receive 1 from orders as receiver
    hold("orders", await receiver("receiver", "orders", "peekLock").receiveMessages(1, { maxWaitTimeInMs: 1000 }));
    // playground: t=1s orders: receiver starts receiving
    // playground: t=1s orders: #1 locked by receiver until t=31s (DeliveryCount 1) (RCV-02)

    await sleep(1000); // on to t=2s

    // Step 2 arrived first: defer it until step 1 is done.
    // t=2s: defer #1 in orders (receiver)
    await receiver("receiver", "orders", "peekLock").deferMessage(held.get("orders#1"));
    // playground: t=2s orders: #1 deferred by receiver: only receivable by sequence number (RCV-09)

    await sleep(1000); // on to t=3s

    // t=3s: receive 5 from orders as receiver
    hold("orders", await receiver("receiver", "orders", "peekLock").receiveMessages(5, { maxWaitTimeInMs: 1000 }));
    // playground: t=3s orders: #2 locked by receiver until t=33s (DeliveryCount 1) (RCV-02)

    await sleep(1000); // on to t=4s

    // t=4s: complete #2 in orders (receiver)
    await receiver("receiver", "orders", "peekLock").completeMessage(held.get("orders#2"));
    // playground: t=4s orders: #2 completed by receiver (RCV-05)

    await sleep(1000); // on to t=5s

    // t=5s: receive deferred #99 from orders
    try {
        hold("orders", await receiver("receiver", "orders", "peekLock").receiveDeferredMessages([Long.fromNumber(99)]));
    } catch (e) {
        console.log("failed as expected:", e.code || e.message);
    }
    // playground: t=5s orders: receive deferred failed: MessageNotFound

    await sleep(1000); // on to t=6s

    // t=6s: receive deferred #1 from orders
    hold("orders", await receiver("receiver", "orders", "peekLock").receiveDeferredMessages([Long.fromNumber(1)]));
    // playground: t=6s orders: #1 locked by receiver by sequence number until t=36s (DeliveryCount 2, a redelivery) (RCV-09)

    await sleep(1000); // on to t=7s

    // t=7s: complete #1 in orders (receiver)
    await receiver("receiver", "orders", "peekLock").completeMessage(held.get("orders#1"));
    // playground: t=7s orders: #1 completed by receiver (RCV-05)

    for (const r of receivers.values()) await r.close();
    await client.close();
}

main().catch((e) => { console.error(e); process.exit(1); });
