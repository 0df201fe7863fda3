foreach (var s in senders.Values) await s.CloseAsync();
foreach (var r in receivers.Values) await r.CloseAsync();
if (differences.Count > 0)
{
    Console.WriteLine($"{SOME_DIFFER} {string.Join("; ", differences)}");
    return 1;
}
Console.WriteLine(ALL_SAME);
return 0;
