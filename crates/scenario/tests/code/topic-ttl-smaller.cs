// Topic TTL smaller than the subscription's: written by the Service Bus Playground (Azure.Messaging.ServiceBus).
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

// The topic's default TTL is 5 minutes, the subscription's 1 hour: the topic's applies (TTL-04, TOP-01).
// At each point the playground showed something (the messages received, their DeliveryCount and DeadLetterReason, a session, an error, and at its expectations the messages each entity holds by State and those it names, read with peek, and whether entities exist and their settings, read with the management API), the program checks what the broker returned and prints it; it exits with 1 if anything differs.
// The checks are apart from the program's calls: each step's calls are held by `await Step(..., async () => { ... })`, which turns an error into a check, and every other check is a line that calls check, counted, present or peeked. Without them, what is left is the program's own calls.

// The entities, with their settings as the playground created them.
if (admin is not null)
{
    if (!(await admin.TopicExistsAsync("events")).Value)
    {
        await admin.CreateTopicAsync(new CreateTopicOptions("events") { DefaultMessageTimeToLive = TimeSpan.FromMilliseconds(300000) });
    }
    {
        var settings1 = (await admin.GetTopicAsync("events")).Value;
        Check("events DefaultMessageTimeToLive (ms)", "300000", ((long)settings1.DefaultMessageTimeToLive.TotalMilliseconds).ToString());
        Check("events AutoDeleteOnIdle (ms)", "922337203685477", ((long)settings1.AutoDeleteOnIdle.TotalMilliseconds).ToString());
        Check("events RequiresDuplicateDetection", "false", settings1.RequiresDuplicateDetection.ToString().ToLowerInvariant());
    }
    if (!(await admin.SubscriptionExistsAsync("events", "audit")).Value)
    {
        await admin.CreateSubscriptionAsync(new CreateSubscriptionOptions("events", "audit") { DefaultMessageTimeToLive = TimeSpan.FromMilliseconds(3600000), LockDuration = TimeSpan.FromMilliseconds(30000), MaxDeliveryCount = 10, DeadLetteringOnMessageExpiration = true });
    }
    {
        var settings2 = (await admin.GetSubscriptionAsync("events", "audit")).Value;
        Check("events/subscriptions/audit DefaultMessageTimeToLive (ms)", "3600000", ((long)settings2.DefaultMessageTimeToLive.TotalMilliseconds).ToString());
        Check("events/subscriptions/audit LockDuration (ms)", "30000", ((long)settings2.LockDuration.TotalMilliseconds).ToString());
        Check("events/subscriptions/audit MaxDeliveryCount", "10", settings2.MaxDeliveryCount.ToString());
        Check("events/subscriptions/audit DeadLetteringOnMessageExpiration", "true", settings2.DeadLetteringOnMessageExpiration.ToString().ToLowerInvariant());
        Check("events/subscriptions/audit RequiresSession", "false", settings2.RequiresSession.ToString().ToLowerInvariant());
        Check("events/subscriptions/audit AutoDeleteOnIdle (ms)", "922337203685477", ((long)settings2.AutoDeleteOnIdle.TotalMilliseconds).ToString());
    }
    if (!(await admin.SubscriptionExistsAsync("events", "invoices")).Value)
    {
        await admin.CreateSubscriptionAsync(new CreateSubscriptionOptions("events", "invoices") { LockDuration = TimeSpan.FromMilliseconds(30000), MaxDeliveryCount = 10 }, new CreateRuleOptions("$Default", new CorrelationRuleFilter { Subject = "invoice" }));
    }
    {
        var settings3 = (await admin.GetSubscriptionAsync("events", "invoices")).Value;
        Check("events/subscriptions/invoices DefaultMessageTimeToLive (ms)", "922337203685477", ((long)settings3.DefaultMessageTimeToLive.TotalMilliseconds).ToString());
        Check("events/subscriptions/invoices LockDuration (ms)", "30000", ((long)settings3.LockDuration.TotalMilliseconds).ToString());
        Check("events/subscriptions/invoices MaxDeliveryCount", "10", settings3.MaxDeliveryCount.ToString());
        Check("events/subscriptions/invoices DeadLetteringOnMessageExpiration", "false", settings3.DeadLetteringOnMessageExpiration.ToString().ToLowerInvariant());
        Check("events/subscriptions/invoices RequiresSession", "false", settings3.RequiresSession.ToString().ToLowerInvariant());
        Check("events/subscriptions/invoices AutoDeleteOnIdle (ms)", "922337203685477", ((long)settings3.AutoDeleteOnIdle.TotalMilliseconds).ToString());
    }
}
else Console.WriteLine(EXISTING);

// The timeline, each step at its instant after the program's start. Settlements use the messages this program received.

// t=0s: send a message to events
await Step("t=0s: send a message to events", null, async () =>
{
    await Sender("events").SendMessageAsync(new ServiceBusMessage("") { MessageId = "evt-1", Subject = "order" });
});
// playground: t=0s events: #1 enqueued; ExpiresAt t=5m (TTL-01)
// playground: t=0s events/subscriptions/audit: #1 enqueued; ExpiresAt t=5m (TOP-01)
Check("events/subscriptions/audit at t=0s: messages by State, as peek shows them (a locked message is active)", "active 1, deferred 0, scheduled 0", await Counted("events/subscriptions/audit", "active 1, deferred 0, scheduled 0", 299000));
Check("events/subscriptions/invoices at t=0s: messages by State, as peek shows them (a locked message is active)", "active 0, deferred 0, scheduled 0", await Counted("events/subscriptions/invoices", "active 0, deferred 0, scheduled 0", 299000));
await Step("events/subscriptions/audit #1 at t=0s, as peek shows it: peek", null, async () =>
{
    var m = await Peeked("events/subscriptions/audit", 1);
    Check("events/subscriptions/audit #1 at t=0s, as peek shows it: DeliveryCount", "0", m is null ? "not there" : $"{m.DeliveryCount}");
});

await WaitUntil(299000); // on to t=4m 59s
Check("events/subscriptions/audit at t=4m 59s: messages by State, as peek shows them (a locked message is active)", "active 1, deferred 0, scheduled 0", await Counted("events/subscriptions/audit", "active 1, deferred 0, scheduled 0", 300000));
Check("events/subscriptions/audit/$deadletterqueue at t=4m 59s: messages by State, as peek shows them (a locked message is active)", "active 0, deferred 0, scheduled 0", await Counted("events/subscriptions/audit/$deadletterqueue", "active 0, deferred 0, scheduled 0", 300000));

await WaitUntil(300000); // on to t=5m
// playground: t=5m events/subscriptions/audit: #1 dead-lettered: TTLExpiredException (The message expired and was dead lettered.) (TTL-11)
Check("events/subscriptions/audit at t=5m: messages by State, as peek shows them (a locked message is active)", "active 0, deferred 0, scheduled 0", await Counted("events/subscriptions/audit", "active 0, deferred 0, scheduled 0", 305000));
Check("events/subscriptions/audit/$deadletterqueue at t=5m: messages by State, as peek shows them (a locked message is active)", "active 1, deferred 0, scheduled 0", await Counted("events/subscriptions/audit/$deadletterqueue", "active 1, deferred 0, scheduled 0", 305000));

foreach (var s in senders.Values) await s.CloseAsync();
foreach (var r in receivers.Values) await r.CloseAsync();
if (differences.Count > 0)
{
    Console.WriteLine($"{SOME_DIFFER} {string.Join("; ", differences)}");
    return 1;
}
Console.WriteLine(ALL_SAME);
return 0;
