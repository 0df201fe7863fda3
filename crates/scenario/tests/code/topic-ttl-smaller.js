// Topic TTL smaller than the subscription's: written by the Service Bus Playground (@azure/service-bus).
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

    // The topic's default TTL is 5 minutes, the subscription's 1 hour: the topic's applies (TTL-04, TOP-01).

    // The entities, with their settings as the playground created them.
    await admin.createTopic("events", { defaultMessageTimeToLive: "PT5M" });
    await admin.createSubscription("events", "audit", { defaultMessageTimeToLive: "PT1H", lockDuration: "PT30S", maxDeliveryCount: 10, deadLetteringOnMessageExpiration: true });
    await admin.createSubscription("events", "invoices", { lockDuration: "PT30S", maxDeliveryCount: 10 });
    await admin.deleteRule("events", "invoices", "$Default");
    await admin.createRule("events", "invoices", "$Default", { subject: "invoice" });

    // The timeline. SequenceNumbers are the playground's; a fresh entity numbers from 1 too.

    // t=0s: send a message to events
    await client.createSender("events").sendMessages({ body: "", messageId: "evt-1", subject: "order" });
    // playground: t=0s events: #1 enqueued; ExpiresAt t=5m (TTL-01)
    // playground: t=0s events/subscriptions/audit: #1 enqueued; ExpiresAt t=5m (TOP-01)

    await sleep(300000); // on to t=5m
    // playground: t=5m events/subscriptions/audit: #1 dead-lettered: TTLExpiredException (The message expired and was dead lettered.) (TTL-11)

    for (const r of receivers.values()) await r.close();
    await client.close();
}

main().catch((e) => { console.error(e); process.exit(1); });
