// Defer, then receive by sequence number: written by the Service Bus Playground (Azure.Messaging.ServiceBus).
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

// A deferred message stays in the queue, invisible to normal receive; it comes back only by its SequenceNumber, locked again with DeliveryCount + 1. An unknown number fails the call (RCV-09).

// The entities, with their settings as the playground created them.
await admin.CreateQueueAsync(new CreateQueueOptions("orders") { LockDuration = TimeSpan.FromMilliseconds(30000), MaxDeliveryCount = 10 });

// The timeline. SequenceNumbers are the playground's; a fresh entity numbers from 1 too.

// t=0s: send a message to orders
await client.CreateSender("orders").SendMessageAsync(new ServiceBusMessage("") { MessageId = "step-2-of-order" });
// playground: t=0s orders: #1 enqueued; ExpiresAt never (TTL-01)

// t=0s: send a message to orders
await client.CreateSender("orders").SendMessageAsync(new ServiceBusMessage("") { MessageId = "step-1-of-order" });
// playground: t=0s orders: #2 enqueued; ExpiresAt never (TTL-01)

await Task.Delay(TimeSpan.FromMilliseconds(1000)); // on to t=1s

// t=1s: receive 1 from orders as receiver
Hold("orders", await Receiver("receiver", "orders", ServiceBusReceiveMode.PeekLock).ReceiveMessagesAsync(1, TimeSpan.FromSeconds(1)));
// playground: t=1s orders: receiver starts receiving
// playground: t=1s orders: #1 locked by receiver until t=31s (DeliveryCount 1) (RCV-02)

await Task.Delay(TimeSpan.FromMilliseconds(1000)); // on to t=2s

// Step 2 arrived first: defer it until step 1 is done.
// t=2s: defer #1 in orders (receiver)
await Receiver("receiver", "orders", ServiceBusReceiveMode.PeekLock).DeferMessageAsync(held["orders#1"]);
// playground: t=2s orders: #1 deferred by receiver: only receivable by sequence number (RCV-09)

await Task.Delay(TimeSpan.FromMilliseconds(1000)); // on to t=3s

// t=3s: receive 5 from orders as receiver
Hold("orders", await Receiver("receiver", "orders", ServiceBusReceiveMode.PeekLock).ReceiveMessagesAsync(5, TimeSpan.FromSeconds(1)));
// playground: t=3s orders: #2 locked by receiver until t=33s (DeliveryCount 1) (RCV-02)

await Task.Delay(TimeSpan.FromMilliseconds(1000)); // on to t=4s

// t=4s: complete #2 in orders (receiver)
await Receiver("receiver", "orders", ServiceBusReceiveMode.PeekLock).CompleteMessageAsync(held["orders#2"]);
// playground: t=4s orders: #2 completed by receiver (RCV-05)

await Task.Delay(TimeSpan.FromMilliseconds(1000)); // on to t=5s

// t=5s: receive deferred #99 from orders
try {
    Hold("orders", await Receiver("receiver", "orders", ServiceBusReceiveMode.PeekLock).ReceiveDeferredMessagesAsync(new long[] { 99 }));
} catch (ServiceBusException e) {
    Console.WriteLine($"failed as expected: {e.Reason}");
}
// playground: t=5s orders: receive deferred failed: MessageNotFound

await Task.Delay(TimeSpan.FromMilliseconds(1000)); // on to t=6s

// t=6s: receive deferred #1 from orders
Hold("orders", await Receiver("receiver", "orders", ServiceBusReceiveMode.PeekLock).ReceiveDeferredMessagesAsync(new long[] { 1 }));
// playground: t=6s orders: #1 locked by receiver by sequence number until t=36s (DeliveryCount 2, a redelivery) (RCV-09)

await Task.Delay(TimeSpan.FromMilliseconds(1000)); // on to t=7s

// t=7s: complete #1 in orders (receiver)
await Receiver("receiver", "orders", ServiceBusReceiveMode.PeekLock).CompleteMessageAsync(held["orders#1"]);
// playground: t=7s orders: #1 completed by receiver (RCV-05)

foreach (var r in receivers.Values) await r.CloseAsync();
