// Topic TTL smaller than the subscription's: written by the Service Bus Playground (Azure.Messaging.ServiceBus).
// dotnet add package Azure.Messaging.ServiceBus
using Azure.Messaging.ServiceBus;
using Azure.Messaging.ServiceBus.Administration;

// Your namespace's connection string; for the local emulator:
// Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;
var connection = Environment.GetEnvironmentVariable("SERVICEBUS_CONNECTION") ?? "<connection string>";
await using var client = new ServiceBusClient(connection);
var admin = new ServiceBusAdministrationClient(connection);
var start = DateTimeOffset.UtcNow;
var receivers = new Dictionary<string, ServiceBusReceiver>();
var held = new Dictionary<string, ServiceBusReceivedMessage>();
var scheduled = new Dictionary<string, long>();
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
void Hold(string path, IEnumerable<ServiceBusReceivedMessage> got)
{
    foreach (var m in got) held[$"{path}#{m.SequenceNumber}"] = m;
}

// The topic's default TTL is 5 minutes, the subscription's 1 hour: the topic's applies (TTL-04, TOP-01).

// The entities, with their settings as the playground created them.
await admin.CreateTopicAsync(new CreateTopicOptions("events") { DefaultMessageTimeToLive = TimeSpan.FromMilliseconds(300000) });
await admin.CreateSubscriptionAsync(new CreateSubscriptionOptions("events", "audit") { DefaultMessageTimeToLive = TimeSpan.FromMilliseconds(3600000), LockDuration = TimeSpan.FromMilliseconds(30000), MaxDeliveryCount = 10, DeadLetteringOnMessageExpiration = true });
await admin.CreateSubscriptionAsync(new CreateSubscriptionOptions("events", "invoices") { LockDuration = TimeSpan.FromMilliseconds(30000), MaxDeliveryCount = 10 }, new CreateRuleOptions("$Default", new CorrelationRuleFilter { Subject = "invoice" }));

// The timeline. SequenceNumbers are the playground's; a fresh entity numbers from 1 too.

// t=0s: send a message to events
await client.CreateSender("events").SendMessageAsync(new ServiceBusMessage("") { MessageId = "evt-1", Subject = "order" });
// playground: t=0s events: #1 enqueued; ExpiresAt t=5m (TTL-01)
// playground: t=0s events/subscriptions/audit: #1 enqueued; ExpiresAt t=5m (TOP-01)

await Task.Delay(TimeSpan.FromMilliseconds(300000)); // on to t=5m
// playground: t=5m events/subscriptions/audit: #1 dead-lettered: TTLExpiredException (The message expired and was dead lettered.) (TTL-11)

foreach (var r in receivers.Values) await r.CloseAsync();
