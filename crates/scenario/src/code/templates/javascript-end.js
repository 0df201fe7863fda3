for (const s of senders.values()) await s.close();
for (const r of receivers.values()) await r.close();
await client.close();
await countsClient.close();
if (differences.length > 0) {
    console.log(SOME_DIFFER, differences.join("; "));
    process.exitCode = 1;
} else {
    console.log(ALL_SAME);
}
