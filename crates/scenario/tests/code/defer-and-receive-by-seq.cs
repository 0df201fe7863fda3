// Defer, then receive by sequence number: written by the Service Bus Playground (Azure.Messaging.ServiceBus).
// dotnet add package Azure.Messaging.ServiceBus
using Azure.Messaging.ServiceBus;
using Azure.Messaging.ServiceBus.Administration;

// Your namespace's connection string; for the local emulator:
// Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;
var connection = Environment.GetEnvironmentVariable("SERVICEBUS_CONNECTION") ?? "<connection string>";
// The administration calls run only with SERVICEBUS_ADMIN_CONNECTION, the management endpoint (not the messaging one): sbp serve FILE --no-entities --admin ADDR serves it over http (.NET), --admin-tls ADDR --tls-cert CERT over https (Python, JavaScript: trust CERT with REQUESTS_CA_BUNDLE or NODE_EXTRA_CA_CERTS), and this program then creates the entities. Without it the entities are taken as existing, as sbp serve FILE creates them from the file and the emulator from its Config.json.
var adminConnection = Environment.GetEnvironmentVariable("SERVICEBUS_ADMIN_CONNECTION");
// SBP_SPEED=N runs the waits N times as fast, to go with sbp serve --speed N (against Azure or the emulator, leave it unset).
var SPEED = double.Parse(Environment.GetEnvironmentVariable("SBP_SPEED") ?? "1", System.Globalization.CultureInfo.InvariantCulture);
const string SAME = "as the playground showed";
const string DIFFERS = "DIFFERS";
const string SHOWED = "the playground showed";
const string RETURNED = "the broker returned";
const string NOT_CHECKED = "not checked";
const string ALL_SAME = "Every check as the playground showed.";
const string SOME_DIFFER = "Checks that differ from the playground:";
const string EXISTING = "No SERVICEBUS_ADMIN_CONNECTION: the entities are taken as existing.";
const string LOOP_FAILED = "A loop's operation failed, as it may in the playground too:";
const string NO_ERROR = "no error";
// No retries: each call is one attempt, as each step of the playground is (the SDKs retry some errors by themselves, SessionCannotBeLocked among them, and the timeline would slip).
await using var client = new ServiceBusClient(connection, new ServiceBusClientOptions { RetryOptions = new ServiceBusRetryOptions { MaxRetries = 0 } });
var admin = adminConnection is null ? null : new ServiceBusAdministrationClient(adminConnection);
var start = DateTimeOffset.UtcNow;
var receivers = new Dictionary<string, ServiceBusReceiver>();
var senders = new Dictionary<string, ServiceBusSender>();
var calls = new Dictionary<string, IReadOnlyList<ServiceBusReceivedMessage>>();
var scheduled = new Dictionary<string, long>();
var differences = new List<string>();
var checking = true;
ServiceBusReceiver Receiver(string name, string path, ServiceBusReceiveMode mode)
{
    var key = $"{name}|{path}|{mode}";
    if (!receivers.TryGetValue(key, out var r))
    {
        var options = new ServiceBusReceiverOptions { ReceiveMode = mode };
        var parts = path.Split("/subscriptions/");
        r = parts.Length == 2 ? client.CreateReceiver(parts[0], parts[1], options) : client.CreateReceiver(path, options);
        receivers[key] = r;
    }
    return r;
}
ServiceBusSender Sender(string path)
{
    if (!senders.TryGetValue(path, out var s)) senders[path] = s = client.CreateSender(path);
    return s;
}
async Task WaitUntil(long ms)
{
    var delay = start.AddMilliseconds(ms / SPEED) - DateTimeOffset.UtcNow;
    if (delay > TimeSpan.Zero) await Task.Delay(delay);
}
// Fewer messages than asked may come at a time: ask again until the expected ones are there, or until the next step's instant (`until`, ms after the start), so that it runs on time. The first call waits at least 1 s for an expected message (a receiver's link opens within it).
async Task<IReadOnlyList<ServiceBusReceivedMessage>> ReceiveAsync(ServiceBusReceiver r, int count, int expected, long until)
{
    var got = new List<ServiceBusReceivedMessage>();
    var deadline = start.AddMilliseconds(until / SPEED);
    var least = TimeSpan.FromSeconds(1);
    while (true)
    {
        var wait = got.Count < expected ? deadline - DateTimeOffset.UtcNow : TimeSpan.FromMilliseconds(100);
        if (wait < least) wait = least;
        least = TimeSpan.FromMilliseconds(100);
        got.AddRange(await r.ReceiveMessagesAsync(count - got.Count, wait));
        if (got.Count >= expected || got.Count >= count || DateTimeOffset.UtcNow >= deadline) return got;
    }
}
// What peek shows of an entity (RCV-11), by State: it locks nothing and changes no DeliveryCount.
// Asked again until it is what the playground showed (the broker's instants lag the program's by its calls: opening a link takes the first send about half a second), or until the next step's instant, for at least 1 s (a lag of the wall clock's, whatever the speed).
async Task<string> Counted(string path, string showed, long until)
{
    var r = Receiver("sbp-counts", path, ServiceBusReceiveMode.PeekLock);
    var deadline = start.AddMilliseconds(until / SPEED);
    if (deadline < DateTimeOffset.UtcNow.AddSeconds(1)) deadline = DateTimeOffset.UtcNow.AddSeconds(1);
    while (true)
    {
        var states = new Dictionary<string, int> { ["active"] = 0, ["deferred"] = 0, ["scheduled"] = 0 };
        long next = 1;
        try
        {
            for (var i = 0; i < 100; i++)
            {
                var got = await r.PeekMessagesAsync(100, next);
                if (got.Count == 0) break;
                foreach (var m in got) { var s = m.State.ToString().ToLowerInvariant(); states[s] = states.GetValueOrDefault(s) + 1; }
                next = got[^1].SequenceNumber + 1;
            }
        }
        catch (Exception e) { return Failure(e); }
        var shown = string.Join(", ", states.Select(kv => $"{kv.Key} {kv.Value}"));
        if (shown == showed || DateTimeOffset.UtcNow >= deadline) return shown;
        await Task.Delay(100);
    }
}
// Whether an entity exists, as the management API reads it (a read is no activity: it keeps nothing alive, IDLE-02).
// Asked again until it is what the playground showed (the broker's instants lag the program's by its calls), or until the next step's instant, for at least 1 s (a lag of the wall clock's, whatever the speed).
async Task<string> Present(Func<Task<bool>> exists, string showed, long until)
{
    var deadline = start.AddMilliseconds(until / SPEED);
    if (deadline < DateTimeOffset.UtcNow.AddSeconds(1)) deadline = DateTimeOffset.UtcNow.AddSeconds(1);
    while (true)
    {
        var shown = (await exists()).ToString().ToLowerInvariant();
        if (shown == showed || DateTimeOffset.UtcNow >= deadline) return shown;
        await Task.Delay(100);
    }
}
// Message `seq` of an entity as peek shows it (RCV-11), or null where it is not there.
async Task<ServiceBusReceivedMessage?> Peeked(string path, long seq)
{
    var m = await Receiver("sbp-counts", path, ServiceBusReceiveMode.PeekLock).PeekMessageAsync(seq);
    return m is not null && m.SequenceNumber == seq ? m : null;
}
void Check(string what, string showed, string returned)
{
    if (!checking) Console.WriteLine($"{NOT_CHECKED}: {what}: {returned}");
    else if (showed == returned) Console.WriteLine($"{SAME}: {what}: {returned}");
    else { differences.Add(what); Console.WriteLine($"{DIFFERS}: {what}: {SHOWED} {showed}, {RETURNED} {returned}"); }
}
// One step's calls as one checked attempt: an error the playground did not show (or none where it showed one) is a difference named with the step, and the program goes on.
async Task Step(string what, string? expected, Func<Task> body)
{
    try
    {
        await body();
    }
    catch (Exception e)
    {
        Check(what, expected ?? NO_ERROR, Failure(e));
        return;
    }
    if (expected is not null) Check(what, expected, NO_ERROR);
}
ServiceBusReceivedMessage? Message(string call, int i)
{
    if (calls.TryGetValue(call, out var got) && i < got.Count) return got[i];
    Check($"{call}: message {i + 1}", "received", "not received");
    return null;
}
long Seq(string call, int i) => Message(call, i)?.SequenceNumber ?? -1;
string Failure(Exception e) => e is ServiceBusException s ? s.Reason.ToString() switch
{
    "MessagingEntityNotFound" => "MessagingEntityNotFound",
    "ServiceBusy" => "ServerBusy",
    "ServiceTimeout" => "ServiceTimeout",
    var reason => reason,
} : e is InvalidOperationException ? "InvalidOperation" : e.GetType().Name;

// A deferred message stays in the queue, invisible to normal receive; it comes back only by its SequenceNumber, locked again with DeliveryCount + 1. An unknown number fails the call (RCV-09).
// At each point the playground showed something (the messages received, their DeliveryCount and DeadLetterReason, a session, an error, and at its expectations the messages each entity holds by State and those it names, read with peek, and whether entities exist and their settings, read with the management API), the program checks what the broker returned and prints it; it exits with 1 if anything differs.
// The checks are apart from the program's calls: each step's calls are held by `await Step(..., async () => { ... })`, which turns an error into a check, and every other check is a line that calls check, counted, present or peeked. Without them, what is left is the program's own calls.

// The entities, with their settings as the playground created them.
if (admin is not null)
{
    if (!(await admin.QueueExistsAsync("orders")).Value)
    {
        await admin.CreateQueueAsync(new CreateQueueOptions("orders") { LockDuration = TimeSpan.FromMilliseconds(30000), MaxDeliveryCount = 10 });
    }
    {
        var settings1 = (await admin.GetQueueAsync("orders")).Value;
        Check("orders DefaultMessageTimeToLive (ms)", "922337203685477", ((long)settings1.DefaultMessageTimeToLive.TotalMilliseconds).ToString());
        Check("orders LockDuration (ms)", "30000", ((long)settings1.LockDuration.TotalMilliseconds).ToString());
        Check("orders MaxDeliveryCount", "10", settings1.MaxDeliveryCount.ToString());
        Check("orders DeadLetteringOnMessageExpiration", "false", settings1.DeadLetteringOnMessageExpiration.ToString().ToLowerInvariant());
        Check("orders RequiresSession", "false", settings1.RequiresSession.ToString().ToLowerInvariant());
        Check("orders AutoDeleteOnIdle (ms)", "922337203685477", ((long)settings1.AutoDeleteOnIdle.TotalMilliseconds).ToString());
        Check("orders RequiresDuplicateDetection", "false", settings1.RequiresDuplicateDetection.ToString().ToLowerInvariant());
    }
}
else Console.WriteLine(EXISTING);

// The timeline, each step at its instant after the program's start. Settlements use the messages this program received.

// t=0s: send a message to orders
await Step("t=0s: send a message to orders", null, async () =>
{
    await Sender("orders").SendMessageAsync(new ServiceBusMessage("") { MessageId = "step-2-of-order" });
});
// playground: t=0s orders: #1 enqueued; ExpiresAt never (TTL-01)

// t=0s: send a message to orders
await Step("t=0s: send a message to orders", null, async () =>
{
    await Sender("orders").SendMessageAsync(new ServiceBusMessage("") { MessageId = "step-1-of-order" });
});
// playground: t=0s orders: #2 enqueued; ExpiresAt never (TTL-01)

await WaitUntil(1000); // on to t=1s

// t=1s: receive 1 from orders as receiver
await Step("t=1s: receive 1 from orders as receiver", null, async () =>
{
    {
        var got = await ReceiveAsync(Receiver("receiver", "orders", ServiceBusReceiveMode.PeekLock), 1, 1, 2000);
        calls["c1"] = got;
        Check("receive 1 from orders as receiver: messages", "1", got.Count.ToString());
        Check("receive 1 from orders as receiver: MessageIds", "step-2-of-order", string.Join(",", got.Select(m => m.MessageId)));
        Check("receive 1 from orders as receiver: DeliveryCount as this SDK counts it", "1", string.Join(",", got.Select(m => m.DeliveryCount)));
    }
});
// playground: t=1s orders: receiver starts receiving
// playground: t=1s orders: #1 locked by receiver until t=31s (DeliveryCount 1) (RCV-02)

await WaitUntil(2000); // on to t=2s

// Step 2 arrived first: defer it until step 1 is done.
// t=2s: defer #1 in orders (receiver)
await Step("t=2s: defer #1 in orders (receiver)", null, async () =>
{
    {
        var m = Message("c1", 0);
        if (m is not null) await Receiver("receiver", "orders", ServiceBusReceiveMode.PeekLock).DeferMessageAsync(m);
    }
});
// playground: t=2s orders: #1 deferred by receiver: only receivable by sequence number (RCV-09)

await WaitUntil(3000); // on to t=3s

// t=3s: receive 5 from orders as receiver
await Step("t=3s: receive 5 from orders as receiver", null, async () =>
{
    {
        var got = await ReceiveAsync(Receiver("receiver", "orders", ServiceBusReceiveMode.PeekLock), 5, 1, 4000);
        calls["c2"] = got;
        Check("receive 5 from orders as receiver: messages", "1", got.Count.ToString());
        Check("receive 5 from orders as receiver: MessageIds", "step-1-of-order", string.Join(",", got.Select(m => m.MessageId)));
        Check("receive 5 from orders as receiver: DeliveryCount as this SDK counts it", "1", string.Join(",", got.Select(m => m.DeliveryCount)));
    }
});
// playground: t=3s orders: #2 locked by receiver until t=33s (DeliveryCount 1) (RCV-02)
Check("orders at t=3s: messages by State, as peek shows them (a locked message is active)", "active 1, deferred 1, scheduled 0", await Counted("orders", "active 1, deferred 1, scheduled 0", 4000));

await WaitUntil(4000); // on to t=4s

// t=4s: complete #2 in orders (receiver)
await Step("t=4s: complete #2 in orders (receiver)", null, async () =>
{
    {
        var m = Message("c2", 0);
        if (m is not null) await Receiver("receiver", "orders", ServiceBusReceiveMode.PeekLock).CompleteMessageAsync(m);
    }
});
// playground: t=4s orders: #2 completed by receiver (RCV-05)

await WaitUntil(5000); // on to t=5s

// t=5s: receive deferred #99 from orders
await Step("t=5s: receive deferred #99 from orders", "MessageNotFound", async () =>
{
    {
        var got = await Receiver("receiver", "orders", ServiceBusReceiveMode.PeekLock).ReceiveDeferredMessagesAsync(new long[] { 99 });
        calls["c3"] = got;
    }
});
// playground: t=5s orders: receive deferred failed: MessageNotFound

await WaitUntil(6000); // on to t=6s

// t=6s: receive deferred #1 from orders
await Step("t=6s: receive deferred #1 from orders", null, async () =>
{
    {
        var got = await Receiver("receiver", "orders", ServiceBusReceiveMode.PeekLock).ReceiveDeferredMessagesAsync(new long[] { Seq("c1", 0) });
        calls["c4"] = got;
        Check("receive deferred #1 from orders: messages", "1", got.Count.ToString());
        Check("receive deferred #1 from orders: MessageIds", "step-2-of-order", string.Join(",", got.Select(m => m.MessageId)));
        Check("receive deferred #1 from orders: DeliveryCount as this SDK counts it", "2", string.Join(",", got.Select(m => m.DeliveryCount)));
    }
});
// playground: t=6s orders: #1 locked by receiver by sequence number until t=36s (DeliveryCount 2, a redelivery) (RCV-09)
await Step("orders #1 at t=6s, as peek shows it: peek", null, async () =>
{
    var m = await Peeked("orders", Seq("c4", 0));
    Check("orders #1 at t=6s, as peek shows it: DeliveryCount", "1", m is null ? "not there" : $"{m.DeliveryCount}");
});

await WaitUntil(7000); // on to t=7s

// t=7s: complete #1 in orders (receiver)
await Step("t=7s: complete #1 in orders (receiver)", null, async () =>
{
    {
        var m = Message("c4", 0);
        if (m is not null) await Receiver("receiver", "orders", ServiceBusReceiveMode.PeekLock).CompleteMessageAsync(m);
    }
});
// playground: t=7s orders: #1 completed by receiver (RCV-05)
Check("orders at t=7s: messages by State, as peek shows them (a locked message is active)", "active 0, deferred 0, scheduled 0", await Counted("orders", "active 0, deferred 0, scheduled 0", 12000));

foreach (var s in senders.Values) await s.CloseAsync();
foreach (var r in receivers.Values) await r.CloseAsync();
if (differences.Count > 0)
{
    Console.WriteLine($"{SOME_DIFFER} {string.Join("; ", differences)}");
    return 1;
}
Console.WriteLine(ALL_SAME);
return 0;
