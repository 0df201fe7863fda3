const stops = new Map();
const actors = [];
const failures = new Map();
// A loop's operation fails as it may in the playground too (a lapsed lock, a deleted entity): counted, said once, and the loop goes on.
const failed = (name, e) => {
    failures.set(name, (failures.get(name) || 0) + 1);
    if (failures.get(name) === 1) console.log(`${LOOP_FAILED} ${name}: ${failure(e)}`);
};
let seed = 1;
const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
const startProducer = (name, to, rate, limit, prefix, ttlMs, spike) => {
    const stop = stops.get(name) || { stopped: false };
    stops.set(name, stop);
    actors.push((async () => {
        const s = client.createSender(to);
        let due = Date.now();
        for (let n = 1; n <= limit && !stop.stopped; n++) {
            await s.sendMessages({ body: "", messageId: `${prefix}${n}`, ...(ttlMs ? { timeToLive: ttlMs } : {}) }).catch((e) => failed(name, e));
            const at = (Date.now() - start) * SPEED;
            const factor = spike[0] <= at && at < spike[0] + spike[1] ? spike[2] : 1;
            due += 1000 / (rate * factor * SPEED);
            await sleep(Math.max(due - Date.now(), 0));
        }
        await s.close();
    })());
};
const startConsumers = (name, path, instances, peekLock, work, crash, abandon, deadLetter, restartMs) => {
    const stop = stops.get(name) || { stopped: false };
    stops.set(name, stop);
    const [topic, subscription] = path.split("/subscriptions/");
    const mode = peekLock ? "peekLock" : "receiveAndDelete";
    for (let i = 0; i < instances; i++) {
        actors.push((async () => {
            const r = subscription
                ? client.createReceiver(topic, subscription, { receiveMode: mode, maxAutoLockRenewalDurationInMs: 0 })
                : client.createReceiver(path, { receiveMode: mode, maxAutoLockRenewalDurationInMs: 0 });
            while (!stop.stopped) {
                let got = [];
                try {
                    got = await r.receiveMessages(1, { maxWaitTimeInMs: 500 });
                } catch (e) {
                    failed(name, e);
                    if (failure(e) === "MessagingEntityNotFound") break; // its entity is gone: this consumer stops
                    await sleep(1000);
                }
                for (const m of got) {
                    await sleep(work() / SPEED);
                    if (!peekLock || stop.stopped) continue;
                    const draw = random();
                    try {
                        if (draw < crash) await sleep(restartMs / SPEED); // crashed: its lock lapses
                        else if (draw < crash + abandon) await r.abandonMessage(m);
                        else if (draw < crash + abandon + deadLetter) await r.deadLetterMessage(m, { deadLetterReason: "ProcessingFailed", deadLetterErrorDescription: "" });
                        else await r.completeMessage(m);
                    } catch (e) {
                        failed(name, e);
                    }
                }
            }
            await r.close();
        })());
    }
};
const stopActors = (name) => {
    const stop = stops.get(name) || { stopped: false };
    stop.stopped = true;
    stops.set(name, stop);
};
