const client = new ServiceBusClient(connection, { retryOptions: { maxRetries: 0 } }); // (no retries: see above)
const admin = adminConnection ? new ServiceBusAdministrationClient(adminConnection) : undefined;
const start = Date.now();
const receivers = new Map();
const senders = new Map();
const calls = new Map();
const scheduledNumbers = new Map();
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
// Whether an entity exists, as the management API reads it (a read is no activity: it keeps nothing alive, IDLE-02).
// Asked again until it is what the playground showed (the broker's instants lag the program's by its calls), or until the next step's instant, for at least 1 s (a lag of the wall clock's, whatever the speed).
const present = async (exists, showed, until) => {
    const deadline = Math.max(start + until / SPEED, Date.now() + 1000);
    for (;;) {
        const shown = String(await exists());
        if (shown === showed || Date.now() >= deadline) return shown;
        await sleep(100);
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
