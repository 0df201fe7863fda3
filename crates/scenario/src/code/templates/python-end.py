for s in senders.values():
    s.close()
for r in receivers.values():
    r.close()
client.close()
if differences:
    print(SOME_DIFFER, "; ".join(differences))
    sys.exit(1)
print(ALL_SAME)
