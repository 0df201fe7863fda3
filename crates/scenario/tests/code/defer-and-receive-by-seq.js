// Defer, then receive by sequence number: written by the Service Bus Playground (@azure/service-bus).
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
    const calls = new Map();
    const differences = [];
    let checking = true;
    const receiver = (name, path, mode) => {
        const key = `${name}|${path}|${mode}`;
        if (!receivers.has(key)) {
            const [topic, subscription] = path.split("/subscriptions/");
            // No automatic lock renewal (this SDK's default): the playground renews a lock only when a step says so.
            const options = { receiveMode: mode, maxAutoLockRenewalDurationInMs: 0 };
            receivers.set(key, subscription
                ? client.createReceiver(topic, subscription, options)
                : client.createReceiver(path, options));
        }
        return receivers.get(key);
    };
    const sender = (path) => {
        if (!senders.has(path)) senders.set(path, client.createSender(path));
        return senders.get(path);
    };
    const waitUntil = async (ms) => {
        const delay = start + ms / SPEED - Date.now();
        if (delay > 0) await sleep(delay);
    };
    // Fewer messages than asked may come at a time: ask again until the expected ones are there, or until the next step's instant (`until`, ms after the start), so that it runs on time. The first call waits at least 1 s for an expected message (a receiver's link opens within it).
    const receive = async (r, count, expected, until) => {
        const got = [];
        const deadline = start + until / SPEED;
        let least = 1000;
        for (;;) {
            const wait = got.length < expected ? Math.max(deadline - Date.now(), least) : 100;
            least = 100;
            got.push(...(await r.receiveMessages(count - got.length, { maxWaitTimeInMs: wait })));
            if (got.length >= expected || got.length >= count || Date.now() >= deadline) return got;
        }
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
    const message = (call, i) => {
        const got = calls.get(call) || [];
        if (i < got.length) return got[i];
        check(`${call}: message ${i + 1}`, "received", "not received");
        return undefined;
    };
    const seq = (call, i) => {
        const m = message(call, i);
        return m && m.sequenceNumber ? m.sequenceNumber : Long.fromNumber(-1);
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

    // A deferred message stays in the queue, invisible to normal receive; it comes back only by its SequenceNumber, locked again with DeliveryCount + 1. An unknown number fails the call (RCV-09).
    // At each point the playground showed something (the messages received, their DeliveryCount and DeadLetterReason, a session, an error, and at its expectations the messages each entity holds by State and those it names, read with peek, and whether entities exist and their settings, read with the management API), the program checks what the broker returned and prints it; it exits with 1 if anything differs.
    // The checks are apart from the program's calls: each step's calls are held by `await step(..., async () => { ... })`, which turns an error into a check, and every other check is a line that calls check, counted, present or peeked. Without them, what is left is the program's own calls.

    // The entities, with their settings as the playground created them.
    if (admin) {
        if (!(await admin.queueExists("orders"))) {
            await admin.createQueue("orders", { lockDuration: "PT30S", maxDeliveryCount: 10 });
        }
        {
            const settings1 = await admin.getQueue("orders");
            check("orders DefaultMessageTimeToLive (ms)", "922337203685477", isoMs(settings1.defaultMessageTimeToLive));
            check("orders LockDuration (ms)", "30000", isoMs(settings1.lockDuration));
            check("orders MaxDeliveryCount", "10", String(settings1.maxDeliveryCount));
            check("orders DeadLetteringOnMessageExpiration", "false", String(settings1.deadLetteringOnMessageExpiration));
            check("orders RequiresSession", "false", String(settings1.requiresSession));
            check("orders AutoDeleteOnIdle (ms)", "922337203685477", isoMs(settings1.autoDeleteOnIdle));
            check("orders RequiresDuplicateDetection", "false", String(settings1.requiresDuplicateDetection));
        }
    } else console.log(EXISTING);

    // The timeline, each step at its instant after the program's start. Settlements use the messages this program received.

    // t=0s: send a message to orders
    await step("t=0s: send a message to orders", undefined, async () => {
        await sender("orders").sendMessages({ body: "", messageId: "step-2-of-order" });
    });
    // playground: t=0s orders: #1 enqueued; ExpiresAt never (TTL-01)

    // t=0s: send a message to orders
    await step("t=0s: send a message to orders", undefined, async () => {
        await sender("orders").sendMessages({ body: "", messageId: "step-1-of-order" });
    });
    // playground: t=0s orders: #2 enqueued; ExpiresAt never (TTL-01)

    await waitUntil(1000); // on to t=1s

    // t=1s: receive 1 from orders as receiver
    await step("t=1s: receive 1 from orders as receiver", undefined, async () => {
        {
            const got = await receive(receiver("receiver", "orders", "peekLock"), 1, 1, 2000);
            calls.set("c1", got);
            check("receive 1 from orders as receiver: messages", "1", String(got.length));
            check("receive 1 from orders as receiver: MessageIds", "step-2-of-order", got.map((m) => String(m.messageId ?? "")).join(","));
            check("receive 1 from orders as receiver: DeliveryCount as this SDK counts it", "0", got.map((m) => String(m.deliveryCount ?? "")).join(","));
        }
    });
    // playground: t=1s orders: receiver starts receiving
    // playground: t=1s orders: #1 locked by receiver until t=31s (DeliveryCount 1) (RCV-02)

    await waitUntil(2000); // on to t=2s

    // Step 2 arrived first: defer it until step 1 is done.
    // t=2s: defer #1 in orders (receiver)
    await step("t=2s: defer #1 in orders (receiver)", undefined, async () => {
        {
            const m = message("c1", 0);
            if (m) await receiver("receiver", "orders", "peekLock").deferMessage(m);
        }
    });
    // playground: t=2s orders: #1 deferred by receiver: only receivable by sequence number (RCV-09)

    await waitUntil(3000); // on to t=3s

    // t=3s: receive 5 from orders as receiver
    await step("t=3s: receive 5 from orders as receiver", undefined, async () => {
        {
            const got = await receive(receiver("receiver", "orders", "peekLock"), 5, 1, 4000);
            calls.set("c2", got);
            check("receive 5 from orders as receiver: messages", "1", String(got.length));
            check("receive 5 from orders as receiver: MessageIds", "step-1-of-order", got.map((m) => String(m.messageId ?? "")).join(","));
            check("receive 5 from orders as receiver: DeliveryCount as this SDK counts it", "0", got.map((m) => String(m.deliveryCount ?? "")).join(","));
        }
    });
    // playground: t=3s orders: #2 locked by receiver until t=33s (DeliveryCount 1) (RCV-02)
    check("orders at t=3s: messages by State, as peek shows them (a locked message is active)", "active 1, deferred 1, scheduled 0", await counted("orders", "active 1, deferred 1, scheduled 0", 4000));

    await waitUntil(4000); // on to t=4s

    // t=4s: complete #2 in orders (receiver)
    await step("t=4s: complete #2 in orders (receiver)", undefined, async () => {
        {
            const m = message("c2", 0);
            if (m) await receiver("receiver", "orders", "peekLock").completeMessage(m);
        }
    });
    // playground: t=4s orders: #2 completed by receiver (RCV-05)

    await waitUntil(5000); // on to t=5s

    // t=5s: receive deferred #99 from orders
    await step("t=5s: receive deferred #99 from orders", "MessageNotFound", async () => {
        {
            const got = await receiver("receiver", "orders", "peekLock").receiveDeferredMessages([Long.fromNumber(99)]);
            calls.set("c3", got);
        }
    });
    // playground: t=5s orders: receive deferred failed: MessageNotFound

    await waitUntil(6000); // on to t=6s

    // t=6s: receive deferred #1 from orders
    await step("t=6s: receive deferred #1 from orders", undefined, async () => {
        {
            const got = await receiver("receiver", "orders", "peekLock").receiveDeferredMessages([seq("c1", 0)]);
            calls.set("c4", got);
            check("receive deferred #1 from orders: messages", "1", String(got.length));
            check("receive deferred #1 from orders: MessageIds", "step-2-of-order", got.map((m) => String(m.messageId ?? "")).join(","));
            check("receive deferred #1 from orders: DeliveryCount as this SDK counts it", "1", got.map((m) => String(m.deliveryCount ?? "")).join(","));
        }
    });
    // playground: t=6s orders: #1 locked by receiver by sequence number until t=36s (DeliveryCount 2, a redelivery) (RCV-09)
    await step("orders #1 at t=6s, as peek shows it: peek", undefined, async () => {
        const m = await peeked("orders", seq("c4", 0));
        check("orders #1 at t=6s, as peek shows it: DeliveryCount", "1", m === undefined ? "not there" : String(m.deliveryCount ?? ""));
    });

    await waitUntil(7000); // on to t=7s

    // t=7s: complete #1 in orders (receiver)
    await step("t=7s: complete #1 in orders (receiver)", undefined, async () => {
        {
            const m = message("c4", 0);
            if (m) await receiver("receiver", "orders", "peekLock").completeMessage(m);
        }
    });
    // playground: t=7s orders: #1 completed by receiver (RCV-05)
    check("orders at t=7s: messages by State, as peek shows them (a locked message is active)", "active 0, deferred 0, scheduled 0", await counted("orders", "active 0, deferred 0, scheduled 0", 12000));

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
