// Topic TTL smaller than the subscription's: written by the Service Bus Playground (@azure/service-bus).
// npm install @azure/service-bus long
const { ServiceBusClient, ServiceBusAdministrationClient } = require("@azure/service-bus");
const Long = require("long");

// Your namespace's connection string; for the local emulator:
// Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;
const connection = process.env.SERVICEBUS_CONNECTION || "<connection string>";
// The administration calls run only with SERVICEBUS_ADMIN_CONNECTION, the management endpoint (not the messaging one): sbp serve FILE --no-entities --admin ADDR serves it over http (.NET), --admin-tls ADDR --tls-cert CERT over https (Python, JavaScript: trust CERT with REQUESTS_CA_BUNDLE or NODE_EXTRA_CA_CERTS), and this program then creates the entities. Without it the entities are taken as existing, as sbp serve FILE creates them from the file and the emulator from its Config.json.
const adminConnection = process.env.SERVICEBUS_ADMIN_CONNECTION;
// SBP_SPEED=N runs the waits N times as fast, to go with sbp serve --speed N (against Azure or the emulator, leave it unset).
const SPEED = Number(process.env.SBP_SPEED || "1");
const SAME = "as the playground showed";
const DIFFERS = "DIFFERS";
const SHOWED = "the playground showed";
const RETURNED = "the broker returned";
const NOT_CHECKED = "not checked";
const ALL_SAME = "Every check as the playground showed.";
const SOME_DIFFER = "Checks that differ from the playground:";
const EXISTING = "No SERVICEBUS_ADMIN_CONNECTION: the entities are taken as existing.";
const NO_ERROR = "no error";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// No retries: each call is one attempt, as each step of the playground is (the SDKs retry some errors by themselves, SessionCannotBeLocked among them, and the timeline would slip).

async function main() {
    const client = new ServiceBusClient(connection, { retryOptions: { maxRetries: 0 } }); // (no retries: see above)
    const admin = adminConnection ? new ServiceBusAdministrationClient(adminConnection) : undefined;
    const start = Date.now();
    const receivers = new Map();
    const senders = new Map();
    const differences = [];
    let checking = true;
    const sender = (path) => {
        if (!senders.has(path)) senders.set(path, client.createSender(path));
        return senders.get(path);
    };
    const waitUntil = async (ms) => {
        const delay = start + ms / SPEED - Date.now();
        if (delay > 0) await sleep(delay);
    };
    // What peek shows of an entity (RCV-11), by State: it locks nothing and changes no DeliveryCount.
    // Asked again until it is what the playground showed (the broker's instants lag the program's by its calls: opening a link takes the first send about half a second), or until the next step's instant, for at least 1 s (a lag of the wall clock's, whatever the speed).
    // Through a client of its own: this SDK continues a peek without a SequenceNumber where the last one on the entity ended.
    // (A client connects at its first call, so one that is never used costs nothing.)
    const countsClient = new ServiceBusClient(connection, { retryOptions: { maxRetries: 0 } });
    const counted = async (path, showed, until) => {
        const [topic, subscription] = path.split("/subscriptions/");
        const r = subscription ? countsClient.createReceiver(topic, subscription) : countsClient.createReceiver(path);
        const deadline = Math.max(start + until / SPEED, Date.now() + 1000);
        try {
            for (;;) {
                const states = { active: 0, deferred: 0, scheduled: 0 };
                let next = Long.fromNumber(1);
                for (let i = 0; i < 100; i++) {
                    const got = await r.peekMessages(100, { fromSequenceNumber: next });
                    if (got.length === 0) break;
                    for (const m of got) states[m.state] = (states[m.state] || 0) + 1;
                    next = (got[got.length - 1].sequenceNumber || next).add(1);
                }
                const shown = Object.entries(states).map(([k, v]) => `${k} ${v}`).join(", ");
                if (shown === showed || Date.now() >= deadline) return shown;
                await sleep(100);
            }
        } catch (e) {
            return failure(e);
        } finally {
            await r.close();
        }
    };
    // Message `number` of an entity as peek shows it (RCV-11), or undefined where it is not there.
    const peeked = async (path, number) => {
        const [topic, subscription] = path.split("/subscriptions/");
        const r = subscription ? countsClient.createReceiver(topic, subscription) : countsClient.createReceiver(path);
        try {
            const [m] = await r.peekMessages(1, { fromSequenceNumber: Long.fromValue(number) });
            return m && Long.fromValue(m.sequenceNumber || 0).equals(number) ? m : undefined;
        } finally {
            await r.close();
        }
    };
    const check = (what, showed, returned) => {
        if (!checking) console.log(`${NOT_CHECKED}: ${what}: ${returned}`);
        else if (showed === returned) console.log(`${SAME}: ${what}: ${returned}`);
        else {
            differences.push(what);
            console.log(`${DIFFERS}: ${what}: ${SHOWED} ${showed}, ${RETURNED} ${returned}`);
        }
    };
    // One step's calls as one checked attempt: an error the playground did not show (or none where it showed one) is a difference named with the step, and the program goes on.
    const step = async (what, expected, body) => {
        try {
            await body();
        } catch (e) {
            check(what, expected ?? NO_ERROR, failure(e));
            return;
        }
        if (expected !== undefined) check(what, expected, NO_ERROR);
    };
    // The playground's names for this SDK's error codes (it names the service's amqp:not-allowed GeneralError).
    const failure = (e) => ({ ServiceBusy: "ServerBusy", GeneralError: "InvalidOperation" })[e.code] || e.code || (e instanceof TypeError ? "InvalidOperation" : e.name);
    // A duration as the playground writes it, in ms (this SDK gives the service's ISO 8601 duration as text).
    const isoMs = (iso) => {
        const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(iso || "");
        if (!m) return String(iso);
        const [d, h, min, s] = m.slice(1).map((x) => Number(x || 0));
        return String(Math.floor(((d * 24 + h) * 60 + min) * 60000 + s * 1000));
    };

    // The topic's default TTL is 5 minutes, the subscription's 1 hour: the topic's applies (TTL-04, TOP-01).
    // At each point the playground showed something (the messages received, their DeliveryCount and DeadLetterReason, a session, an error, and at its expectations the messages each entity holds by State and those it names, read with peek, and whether entities exist and their settings, read with the management API), the program checks what the broker returned and prints it; it exits with 1 if anything differs.
    // The checks are apart from the program's calls: each step's calls are held by `await step(..., async () => { ... })`, which turns an error into a check, and every other check is a line that calls check, counted, present or peeked. Without them, what is left is the program's own calls.

    // The entities, with their settings as the playground created them.
    if (admin) {
        if (!(await admin.topicExists("events"))) {
            await admin.createTopic("events", { defaultMessageTimeToLive: "PT5M" });
        }
        {
            const settings1 = await admin.getTopic("events");
            check("events DefaultMessageTimeToLive (ms)", "300000", isoMs(settings1.defaultMessageTimeToLive));
            check("events AutoDeleteOnIdle (ms)", "922337203685477", isoMs(settings1.autoDeleteOnIdle));
            check("events RequiresDuplicateDetection", "false", String(settings1.requiresDuplicateDetection));
        }
        if (!(await admin.subscriptionExists("events", "audit"))) {
            await admin.createSubscription("events", "audit", { defaultMessageTimeToLive: "PT1H", lockDuration: "PT30S", maxDeliveryCount: 10, deadLetteringOnMessageExpiration: true });
        }
        {
            const settings2 = await admin.getSubscription("events", "audit");
            check("events/subscriptions/audit DefaultMessageTimeToLive (ms)", "3600000", isoMs(settings2.defaultMessageTimeToLive));
            check("events/subscriptions/audit LockDuration (ms)", "30000", isoMs(settings2.lockDuration));
            check("events/subscriptions/audit MaxDeliveryCount", "10", String(settings2.maxDeliveryCount));
            check("events/subscriptions/audit DeadLetteringOnMessageExpiration", "true", String(settings2.deadLetteringOnMessageExpiration));
            check("events/subscriptions/audit RequiresSession", "false", String(settings2.requiresSession));
            check("events/subscriptions/audit AutoDeleteOnIdle (ms)", "922337203685477", isoMs(settings2.autoDeleteOnIdle));
        }
        if (!(await admin.subscriptionExists("events", "invoices"))) {
            await admin.createSubscription("events", "invoices", { lockDuration: "PT30S", maxDeliveryCount: 10 });
            await admin.deleteRule("events", "invoices", "$Default");
            await admin.createRule("events", "invoices", "$Default", { subject: "invoice" });
        }
        {
            const settings3 = await admin.getSubscription("events", "invoices");
            check("events/subscriptions/invoices DefaultMessageTimeToLive (ms)", "922337203685477", isoMs(settings3.defaultMessageTimeToLive));
            check("events/subscriptions/invoices LockDuration (ms)", "30000", isoMs(settings3.lockDuration));
            check("events/subscriptions/invoices MaxDeliveryCount", "10", String(settings3.maxDeliveryCount));
            check("events/subscriptions/invoices DeadLetteringOnMessageExpiration", "false", String(settings3.deadLetteringOnMessageExpiration));
            check("events/subscriptions/invoices RequiresSession", "false", String(settings3.requiresSession));
            check("events/subscriptions/invoices AutoDeleteOnIdle (ms)", "922337203685477", isoMs(settings3.autoDeleteOnIdle));
        }
    } else console.log(EXISTING);

    // The timeline, each step at its instant after the program's start. Settlements use the messages this program received.

    // t=0s: send a message to events
    await step("t=0s: send a message to events", undefined, async () => {
        await sender("events").sendMessages({ body: "", messageId: "evt-1", subject: "order" });
    });
    // playground: t=0s events: #1 enqueued; ExpiresAt t=5m (TTL-01)
    // playground: t=0s events/subscriptions/audit: #1 enqueued; ExpiresAt t=5m (TOP-01)
    check("events/subscriptions/audit at t=0s: messages by State, as peek shows them (a locked message is active)", "active 1, deferred 0, scheduled 0", await counted("events/subscriptions/audit", "active 1, deferred 0, scheduled 0", 299000));
    check("events/subscriptions/invoices at t=0s: messages by State, as peek shows them (a locked message is active)", "active 0, deferred 0, scheduled 0", await counted("events/subscriptions/invoices", "active 0, deferred 0, scheduled 0", 299000));
    await step("events/subscriptions/audit #1 at t=0s, as peek shows it: peek", undefined, async () => {
        const m = await peeked("events/subscriptions/audit", Long.fromNumber(1));
        check("events/subscriptions/audit #1 at t=0s, as peek shows it: DeliveryCount", "0", m === undefined ? "not there" : String(m.deliveryCount ?? ""));
    });

    await waitUntil(299000); // on to t=4m 59s
    check("events/subscriptions/audit at t=4m 59s: messages by State, as peek shows them (a locked message is active)", "active 1, deferred 0, scheduled 0", await counted("events/subscriptions/audit", "active 1, deferred 0, scheduled 0", 300000));
    check("events/subscriptions/audit/$deadletterqueue at t=4m 59s: messages by State, as peek shows them (a locked message is active)", "active 0, deferred 0, scheduled 0", await counted("events/subscriptions/audit/$deadletterqueue", "active 0, deferred 0, scheduled 0", 300000));

    await waitUntil(300000); // on to t=5m
    // playground: t=5m events/subscriptions/audit: #1 dead-lettered: TTLExpiredException (The message expired and was dead lettered.) (TTL-11)
    check("events/subscriptions/audit at t=5m: messages by State, as peek shows them (a locked message is active)", "active 0, deferred 0, scheduled 0", await counted("events/subscriptions/audit", "active 0, deferred 0, scheduled 0", 305000));
    check("events/subscriptions/audit/$deadletterqueue at t=5m: messages by State, as peek shows them (a locked message is active)", "active 1, deferred 0, scheduled 0", await counted("events/subscriptions/audit/$deadletterqueue", "active 1, deferred 0, scheduled 0", 305000));

    for (const s of senders.values()) await s.close();
    for (const r of receivers.values()) await r.close();
    await client.close();
    await countsClient.close();
    if (differences.length > 0) {
        console.log(SOME_DIFFER, differences.join("; "));
        process.exitCode = 1;
    } else {
        console.log(ALL_SAME);
    }
}

main().catch((e) => { console.error(e); process.exit(1); });
