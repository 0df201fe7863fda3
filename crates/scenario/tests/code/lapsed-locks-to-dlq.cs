// Lapsed locks up to MaxDeliveryCount: written by the Service Bus Playground (Azure.Messaging.ServiceBus).
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

// A worker receives and crashes three times; each lock lapses, DeliveryCount rises, and at MaxDeliveryCount 3 the message moves to the DLQ as MaxDeliveryCountExceeded (RCV-06, RCV-07, MSG-02).
// At each point the playground showed something (the messages received, their DeliveryCount and DeadLetterReason, a session, an error, and at its expectations the messages each entity holds by State and those it names, read with peek, and whether entities exist and their settings, read with the management API), the program checks what the broker returned and prints it; it exits with 1 if anything differs.
// The checks are apart from the program's calls: each step's calls are held by `await Step(..., async () => { ... })`, which turns an error into a check, and every other check is a line that calls check, counted, present or peeked. Without them, what is left is the program's own calls.

// The entities, with their settings as the playground created them.
if (admin is not null)
{
    if (!(await admin.QueueExistsAsync("orders")).Value)
    {
        await admin.CreateQueueAsync(new CreateQueueOptions("orders") { LockDuration = TimeSpan.FromMilliseconds(5000), MaxDeliveryCount = 3 });
    }
    {
        var settings1 = (await admin.GetQueueAsync("orders")).Value;
        Check("orders DefaultMessageTimeToLive (ms)", "922337203685477", ((long)settings1.DefaultMessageTimeToLive.TotalMilliseconds).ToString());
        Check("orders LockDuration (ms)", "5000", ((long)settings1.LockDuration.TotalMilliseconds).ToString());
        Check("orders MaxDeliveryCount", "3", settings1.MaxDeliveryCount.ToString());
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
    await Sender("orders").SendMessageAsync(new ServiceBusMessage("") { MessageId = "poison" });
});
// playground: t=0s orders: #1 enqueued; ExpiresAt never (TTL-01)

await WaitUntil(1000); // on to t=1s

// t=1s: receive 1 from orders as worker
await Step("t=1s: receive 1 from orders as worker", null, async () =>
{
    {
        var got = await ReceiveAsync(Receiver("worker", "orders", ServiceBusReceiveMode.PeekLock), 1, 1, 7000);
        calls["c1"] = got;
        Check("receive 1 from orders as worker: messages", "1", got.Count.ToString());
        Check("receive 1 from orders as worker: MessageIds", "poison", string.Join(",", got.Select(m => m.MessageId)));
        Check("receive 1 from orders as worker: DeliveryCount as this SDK counts it", "1", string.Join(",", got.Select(m => m.DeliveryCount)));
    }
});
// playground: t=1s orders: worker starts receiving
// playground: t=1s orders: #1 locked by worker until t=6s (DeliveryCount 1) (RCV-02)

await WaitUntil(7000); // on to t=7s
// playground: t=6s orders: #1: lock lapsed without settlement (RCV-06)
// playground: t=6s orders: #1 back at its place in the queue (1 failed deliveries so far) (RCV-06)
Check("orders at t=7s: messages by State, as peek shows them (a locked message is active)", "active 1, deferred 0, scheduled 0", await Counted("orders", "active 1, deferred 0, scheduled 0", 10000));
await Step("orders #1 at t=7s, as peek shows it: peek", null, async () =>
{
    var m = await Peeked("orders", Seq("c1", 0));
    Check("orders #1 at t=7s, as peek shows it: DeliveryCount", "1", m is null ? "not there" : $"{m.DeliveryCount}");
});

await WaitUntil(10000); // on to t=10s

// t=10s: receive 1 from orders as worker
await Step("t=10s: receive 1 from orders as worker", null, async () =>
{
    {
        var got = await ReceiveAsync(Receiver("worker", "orders", ServiceBusReceiveMode.PeekLock), 1, 1, 12000);
        calls["c2"] = got;
        Check("receive 1 from orders as worker: messages", "1", got.Count.ToString());
        Check("receive 1 from orders as worker: MessageIds", "poison", string.Join(",", got.Select(m => m.MessageId)));
        Check("receive 1 from orders as worker: DeliveryCount as this SDK counts it", "2", string.Join(",", got.Select(m => m.DeliveryCount)));
    }
});
// playground: t=10s orders: #1 locked by worker until t=15s (DeliveryCount 2, a redelivery) (RCV-02)

await WaitUntil(12000); // on to t=12s
await Step("orders #1 at t=12s, as peek shows it: peek", null, async () =>
{
    var m = await Peeked("orders", Seq("c2", 0));
    Check("orders #1 at t=12s, as peek shows it: DeliveryCount", "1", m is null ? "not there" : $"{m.DeliveryCount}");
});
// orders #1 at t=12s: its LockedUntil is not compared (the program's instants are the wall clock's, the playground's exact)

await WaitUntil(20000); // on to t=20s
// playground: t=15s orders: #1: lock lapsed without settlement (RCV-06)
// playground: t=15s orders: #1 back at its place in the queue (2 failed deliveries so far) (RCV-06)

// t=20s: receive 1 from orders as worker
await Step("t=20s: receive 1 from orders as worker", null, async () =>
{
    {
        var got = await ReceiveAsync(Receiver("worker", "orders", ServiceBusReceiveMode.PeekLock), 1, 1, 25000);
        calls["c3"] = got;
        Check("receive 1 from orders as worker: messages", "1", got.Count.ToString());
        Check("receive 1 from orders as worker: MessageIds", "poison", string.Join(",", got.Select(m => m.MessageId)));
        Check("receive 1 from orders as worker: DeliveryCount as this SDK counts it", "3", string.Join(",", got.Select(m => m.DeliveryCount)));
    }
});
// playground: t=20s orders: #1 locked by worker until t=25s (DeliveryCount 3, a redelivery) (RCV-02)

await WaitUntil(25000); // on to t=25s
// playground: t=25s orders: #1: lock lapsed without settlement (RCV-06)
// playground: t=25s orders: #1 dead-lettered: MaxDeliveryCountExceeded (Message could not be consumed after 3 delivery attempts.) (RCV-07)
Check("orders at t=25s: messages by State, as peek shows them (a locked message is active)", "active 0, deferred 0, scheduled 0", await Counted("orders", "active 0, deferred 0, scheduled 0", 30000));
Check("orders/$deadletterqueue at t=25s: messages by State, as peek shows them (a locked message is active)", "active 1, deferred 0, scheduled 0", await Counted("orders/$deadletterqueue", "active 1, deferred 0, scheduled 0", 30000));
await Step("orders/$deadletterqueue #1 at t=25s, as peek shows it: peek", null, async () =>
{
    var m = await Peeked("orders/$deadletterqueue", Seq("c3", 0));
    Check("orders/$deadletterqueue #1 at t=25s, as peek shows it: DeliveryCount", "3", m is null ? "not there" : $"{m.DeliveryCount}");
    Check("orders/$deadletterqueue #1 at t=25s, as peek shows it: DeadLetterReason", "MaxDeliveryCountExceeded", m is null ? "not there" : $"{m.DeadLetterReason}");
});

foreach (var s in senders.Values) await s.CloseAsync();
foreach (var r in receivers.Values) await r.CloseAsync();
if (differences.Count > 0)
{
    Console.WriteLine($"{SOME_DIFFER} {string.Join("; ", differences)}");
    return 1;
}
Console.WriteLine(ALL_SAME);
return 0;
