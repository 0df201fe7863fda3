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
