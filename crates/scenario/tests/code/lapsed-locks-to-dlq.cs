// Lapsed locks up to MaxDeliveryCount: written by the Service Bus Playground (Azure.Messaging.ServiceBus).
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

// A worker receives and crashes three times; each lock lapses, DeliveryCount rises, and at MaxDeliveryCount 3 the message moves to the DLQ as MaxDeliveryCountExceeded (RCV-06, RCV-07, MSG-02).

// The entities, with their settings as the playground created them.
await admin.CreateQueueAsync(new CreateQueueOptions("orders") { LockDuration = TimeSpan.FromMilliseconds(5000), MaxDeliveryCount = 3 });

// The timeline. SequenceNumbers are the playground's; a fresh entity numbers from 1 too.

// t=0s: send a message to orders
await client.CreateSender("orders").SendMessageAsync(new ServiceBusMessage("") { MessageId = "poison" });
// playground: t=0s orders: #1 enqueued; ExpiresAt never (TTL-01)

await Task.Delay(TimeSpan.FromMilliseconds(1000)); // on to t=1s

// t=1s: receive 1 from orders as worker
Hold("orders", await Receiver("worker", "orders", ServiceBusReceiveMode.PeekLock).ReceiveMessagesAsync(1, TimeSpan.FromSeconds(1)));
// playground: t=1s orders: worker starts receiving
// playground: t=1s orders: #1 locked by worker until t=6s (DeliveryCount 1) (RCV-02)

await Task.Delay(TimeSpan.FromMilliseconds(9000)); // on to t=10s
// playground: t=6s orders: #1: lock lapsed without settlement (RCV-06)
// playground: t=6s orders: #1 back at its place in the queue (1 failed deliveries so far) (RCV-06)

// t=10s: receive 1 from orders as worker
Hold("orders", await Receiver("worker", "orders", ServiceBusReceiveMode.PeekLock).ReceiveMessagesAsync(1, TimeSpan.FromSeconds(1)));
// playground: t=10s orders: #1 locked by worker until t=15s (DeliveryCount 2, a redelivery) (RCV-02)

await Task.Delay(TimeSpan.FromMilliseconds(10000)); // on to t=20s
// playground: t=15s orders: #1: lock lapsed without settlement (RCV-06)
// playground: t=15s orders: #1 back at its place in the queue (2 failed deliveries so far) (RCV-06)

// t=20s: receive 1 from orders as worker
Hold("orders", await Receiver("worker", "orders", ServiceBusReceiveMode.PeekLock).ReceiveMessagesAsync(1, TimeSpan.FromSeconds(1)));
// playground: t=20s orders: #1 locked by worker until t=25s (DeliveryCount 3, a redelivery) (RCV-02)

await Task.Delay(TimeSpan.FromMilliseconds(5000)); // on to t=25s
// playground: t=25s orders: #1: lock lapsed without settlement (RCV-06)
// playground: t=25s orders: #1 dead-lettered: MaxDeliveryCountExceeded (Message could not be consumed after 3 delivery attempts.) (RCV-07)

foreach (var r in receivers.Values) await r.CloseAsync();
