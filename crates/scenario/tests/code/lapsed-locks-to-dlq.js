// Lapsed locks up to MaxDeliveryCount: written by the Service Bus Playground (@azure/service-bus).
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

    // A worker receives and crashes three times; each lock lapses, DeliveryCount rises, and at MaxDeliveryCount 3 the message moves to the DLQ as MaxDeliveryCountExceeded (RCV-06, RCV-07, MSG-02).

    // The entities, with their settings as the playground created them.
    await admin.createQueue("orders", { lockDuration: "PT5S", maxDeliveryCount: 3 });

    // The timeline. SequenceNumbers are the playground's; a fresh entity numbers from 1 too.

    // t=0s: send a message to orders
    await client.createSender("orders").sendMessages({ body: "", messageId: "poison" });
    // playground: t=0s orders: #1 enqueued; ExpiresAt never (TTL-01)

    await sleep(1000); // on to t=1s

    // t=1s: receive 1 from orders as worker
    hold("orders", await receiver("worker", "orders", "peekLock").receiveMessages(1, { maxWaitTimeInMs: 1000 }));
    // playground: t=1s orders: worker starts receiving
    // playground: t=1s orders: #1 locked by worker until t=6s (DeliveryCount 1) (RCV-02)

    await sleep(9000); // on to t=10s
    // playground: t=6s orders: #1: lock lapsed without settlement (RCV-06)
    // playground: t=6s orders: #1 back at its place in the queue (1 failed deliveries so far) (RCV-06)

    // t=10s: receive 1 from orders as worker
    hold("orders", await receiver("worker", "orders", "peekLock").receiveMessages(1, { maxWaitTimeInMs: 1000 }));
    // playground: t=10s orders: #1 locked by worker until t=15s (DeliveryCount 2, a redelivery) (RCV-02)

    await sleep(10000); // on to t=20s
    // playground: t=15s orders: #1: lock lapsed without settlement (RCV-06)
    // playground: t=15s orders: #1 back at its place in the queue (2 failed deliveries so far) (RCV-06)

    // t=20s: receive 1 from orders as worker
    hold("orders", await receiver("worker", "orders", "peekLock").receiveMessages(1, { maxWaitTimeInMs: 1000 }));
    // playground: t=20s orders: #1 locked by worker until t=25s (DeliveryCount 3, a redelivery) (RCV-02)

    await sleep(5000); // on to t=25s
    // playground: t=25s orders: #1: lock lapsed without settlement (RCV-06)
    // playground: t=25s orders: #1 dead-lettered: MaxDeliveryCountExceeded (Message could not be consumed after 3 delivery attempts.) (RCV-07)

    for (const r of receivers.values()) await r.close();
    await client.close();
}

main().catch((e) => { console.error(e); process.exit(1); });
