var stops = new Dictionary<string, CancellationTokenSource>();
var actors = new List<Task>();
var failures = new Dictionary<string, int>();
var rng = new Random(1);
// A loop's operation fails as it may in the playground too (a lapsed lock, a deleted entity): counted, said once, and the loop goes on.
void Failed(string name, Exception e)
{
    lock (failures)
    {
        failures[name] = failures.GetValueOrDefault(name) + 1;
        if (failures[name] == 1) Console.WriteLine($"{LOOP_FAILED} {name}: {Failure(e)}");
    }
}
double Draw() { lock (rng) return rng.NextDouble(); }
CancellationTokenSource Stop(string name)
{
    lock (stops)
    {
        if (!stops.TryGetValue(name, out var s)) stops[name] = s = new CancellationTokenSource();
        return s;
    }
}
async Task Pause(double ms, CancellationToken stop)
{
    try { await Task.Delay(TimeSpan.FromMilliseconds(Math.Max(ms, 0)), stop); } catch (OperationCanceledException) { }
}
void StartProducer(string name, string to, double rate, int limit, string prefix, long ttlMs, (long From, long Duration, double Factor) spike)
{
    var stop = Stop(name).Token;
    actors.Add(Task.Run(async () =>
    {
        await using var s = client.CreateSender(to);
        var due = DateTimeOffset.UtcNow;
        for (var n = 1; n <= limit && !stop.IsCancellationRequested; n++)
        {
            var message = new ServiceBusMessage("") { MessageId = $"{prefix}{n}" };
            if (ttlMs > 0) message.TimeToLive = TimeSpan.FromMilliseconds(ttlMs);
            try { await s.SendMessageAsync(message); } catch (Exception e) { Failed(name, e); }
            var at = (DateTimeOffset.UtcNow - start).TotalMilliseconds * SPEED;
            var factor = spike.From <= at && at < spike.From + spike.Duration ? spike.Factor : 1;
            due = due.AddMilliseconds(1000 / (rate * factor * SPEED));
            await Pause((due - DateTimeOffset.UtcNow).TotalMilliseconds, stop);
        }
    }));
}
void StartConsumers(string name, string path, int instances, bool peekLock, Func<double> work, double crash, double abandon, double deadLetter, double restartMs)
{
    var stop = Stop(name).Token;
    var options = new ServiceBusReceiverOptions { ReceiveMode = peekLock ? ServiceBusReceiveMode.PeekLock : ServiceBusReceiveMode.ReceiveAndDelete };
    var parts = path.Split("/subscriptions/");
    for (var i = 0; i < instances; i++)
    {
        actors.Add(Task.Run(async () =>
        {
            await using var r = parts.Length == 2 ? client.CreateReceiver(parts[0], parts[1], options) : client.CreateReceiver(path, options);
            while (!stop.IsCancellationRequested)
            {
                IReadOnlyList<ServiceBusReceivedMessage> got;
                try { got = await r.ReceiveMessagesAsync(1, TimeSpan.FromMilliseconds(500)); }
                catch (Exception e)
                {
                    Failed(name, e);
                    if (Failure(e) == "MessagingEntityNotFound") break; // its entity is gone: this consumer stops
                    await Pause(1000, stop);
                    continue;
                }
                foreach (var m in got)
                {
                    await Pause(work() / SPEED, stop);
                    if (!peekLock || stop.IsCancellationRequested) continue;
                    var draw = Draw();
                    try
                    {
                        if (draw < crash) await Pause(restartMs / SPEED, stop); // crashed: its lock lapses
                        else if (draw < crash + abandon) await r.AbandonMessageAsync(m);
                        else if (draw < crash + abandon + deadLetter) await r.DeadLetterMessageAsync(m, "ProcessingFailed", "");
                        else await r.CompleteMessageAsync(m);
                    }
                    catch (Exception e) { Failed(name, e); }
                }
            }
        }));
    }
}
void StopActors(string name) => Stop(name).Cancel();
