"""A fault and soak run of `sbp serve` (docs/TESTING.md, "Fault and soak run").

Real Python SDK clients (azure-servicebus) send and receive on the queues `orders` and `plain`
of tests/sdk/entities.json while raw-socket attackers hit the same server (silent sockets,
byte-at-a-time headers, garbage after the AMQP header, an open with a value nested 10,000
deep, a disposition over every id, unfinished multi-frame transfers) and the server is killed
with SIGKILL at seeded random instants and started again at once with the same --state and
port. At the end every queue (and its dead-letter queue) is drained and:
  - every id whose send_messages returned (acknowledged) was received at least once
    (duplicates are allowed, at-least-once, and counted);
  - nothing was received that no producer tried to send (an attacker's unfinished transfer
    taken as a send would show here);
  - the server's RSS stayed under --rss-mb during the run and after the drain;
  - the server never panicked and every attack the server answered was answered as expected.
Exits 1 on any failure, after the summary.

Usage: python tests/sdk/soak.py [--seconds 60] [--seed 1] [--kills N] [--rss-mb 100]
Env: SBP (default target/debug/sbp), paths relative to the repository root.
All traffic goes to 127.0.0.1.
"""
import argparse
import collections
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusSubQueue

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SBP = os.environ.get("SBP", os.path.join(ROOT, "target", "debug", "sbp"))
ENTITIES = os.path.join(ROOT, "tests", "sdk", "entities.json")
QUEUES = ["orders", "plain"]

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("--seconds", type=float, default=60, help="length of the traffic phase (the drain follows)")
p.add_argument("--seed", type=int, default=1)
p.add_argument("--kills", type=int, default=None, help="kill -9s (default: 3, or one per 60 s in a longer run)")
p.add_argument("--rss-mb", type=float, default=100, help="bound on the server's RSS")
p.add_argument("--producers", type=int, default=2, help="per queue")
p.add_argument("--consumers", type=int, default=2, help="per queue")
p.add_argument("--max-messages", type=int, default=2_000_000, help="bound on messages sent in all")
p.add_argument("--rate", type=float, default=0, help="messages/s sent in all at most (0: as fast as the clients go)")
p.add_argument("--verbose", action="store_true")
args = p.parse_args()
KILLS = args.kills if args.kills is not None else max(3, int(args.seconds // 60))
rng = random.Random(args.seed)
T0 = time.monotonic()
stop = threading.Event()
lock = threading.Lock()
failures = []


def now():
    return time.monotonic() - T0


def log(*a):
    print(f"[{now():7.1f}s]", *a, flush=True)


def fail(why):
    with lock:
        failures.append(why)
    log("FAIL", why)


# ---------------------------------------------------------------- the server

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, tmp):
        self.tmp = tmp
        self.port = free_port()
        self.state = os.path.join(tmp, "state.json")
        self.proc = None
        self.epoch = 0  # one more at each start
        self.conn = None
        self.rss = []  # (t, kB, epoch)
        self.starts = []  # (t, seconds to listen)
        self.logs = []
        self.up = threading.Event()

    def start(self):
        self.epoch += 1
        path = os.path.join(self.tmp, f"server-{self.epoch}.log")
        self.logs.append(path)
        out = open(path, "w")
        t = time.monotonic()
        self.proc = subprocess.Popen(
            [SBP, "serve", ENTITIES, "--amqp", f"127.0.0.1:{self.port}", "--http", "none",
             "--state", self.state, "--quiet"],
            stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        out.close()
        while time.monotonic() - t < 60:
            text = open(path).read()
            if "AMQP on" in text:
                for word in text.split():
                    if word.startswith("Endpoint=sb://"):
                        self.conn = word
                self.starts.append((now(), time.monotonic() - t))
                self.up.set()
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        print(open(path).read())
        raise SystemExit(f"sbp serve did not start (epoch {self.epoch})")

    def kill9(self):
        self.up.clear()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def sample(self):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        kb = int(line.split()[1])
                        self.rss.append((now(), kb, self.epoch, len(acked)))
                        return kb
        except (FileNotFoundError, ProcessLookupError):
            return None

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ---------------------------------------------------------------- the real clients

attempted = set()  # every id a producer tried to send
acked = {}  # id -> instant its send_messages returned
delivered = collections.Counter()  # id -> deliveries to a consumer (run and drain)
completed = collections.Counter()  # id -> complete_message calls that returned
stranger = []  # received, never tried
bad_body = []
errors = collections.Counter()  # kind of exception -> count
sent_total = [0]


def client(conn):
    return ServiceBusClient.from_connection_string(
        conn, retry_total=6, retry_backoff_factor=0.3, retry_backoff_max=3)


def note_error(who, e):
    kind = f"{who}: {type(e).__name__}"
    with lock:
        errors[kind] += 1
    if args.verbose:
        log(kind, str(e)[:200])


def producer(srv, queue, k):
    n = 0
    r = random.Random(f"{args.seed}-{queue}-{k}")
    while not stop.is_set():
        srv.up.wait(5)
        try:
            with client(srv.conn) as c, c.get_queue_sender(queue) as s:
                while not stop.is_set():
                    with lock:
                        if sent_total[0] >= args.max_messages:
                            return
                    size = r.randint(1, 10)
                    ids = [f"{queue}-p{k}-{n + i}" for i in range(size)]
                    n += size
                    with lock:
                        attempted.update(ids)
                        sent_total[0] += size
                    s.send_messages([ServiceBusMessage(f"soak {i}", message_id=i) for i in ids], timeout=15)
                    t = now()
                    with lock:
                        for i in ids:
                            acked[i] = t
                    pause = size * args.producers * len(QUEUES) / args.rate if args.rate else 0.01
                    time.sleep(r.uniform(0, 2 * pause))
        except Exception as e:  # noqa: BLE001 - the SDK's errors after a kill; go on
            note_error("send", e)
            time.sleep(0.2)


def take(r, m, queue):
    i = m.message_id
    body = str(m)
    with lock:
        delivered[i] += 1
        if i not in attempted:
            stranger.append((queue, i, body[:80]))
        elif body != f"soak {i}":
            bad_body.append((i, body[:80]))
    r.complete_message(m)
    with lock:
        completed[i] += 1


def consumer(srv, queue):
    while not stop.is_set():
        srv.up.wait(5)
        try:
            with client(srv.conn) as c, c.get_queue_receiver(queue, max_wait_time=1) as r:
                while not stop.is_set():
                    for m in r.receive_messages(max_message_count=50, max_wait_time=1):
                        take(r, m, queue)
        except Exception as e:  # noqa: BLE001
            note_error("receive", e)
            time.sleep(0.2)


# ---------------------------------------------------------------- raw AMQP, written by hand

HEADER = b"AMQP\x00\x01\x00\x00"


def u32(v):
    return b"\x70" + struct.pack(">I", v)


def string(s):
    b = s.encode()
    return b"\xa1" + bytes([len(b)]) + b


def binary(b):
    return b"\xa0" + bytes([len(b)]) + b


def boolean(v):
    return b"\x41" if v else b"\x42"


NULL = b"\x40"


def described(code, fields):
    body = b"".join(fields)
    return b"\x00\x53" + bytes([code]) + b"\xd0" + struct.pack(">II", len(body) + 4, len(fields)) + body


def frame(body, channel=0, payload=b""):
    return struct.pack(">IBBH", 8 + len(body) + len(payload), 2, 0, channel) + body + payload


def open_frame(container="attacker"):
    return frame(described(0x10, [string(container), NULL, u32(65536), b"\x60\x00\x0a"]))


def begin_frame():
    return frame(described(0x11, [NULL, u32(0), u32(100000), u32(100000), u32(100)]))


def attach_frame(handle, address, client_receives):
    source = described(0x28, [string(address)])
    target = described(0x29, [string(address)])
    return frame(described(0x12, [
        string(f"link-{handle}"), u32(handle), boolean(client_receives), b"\x50\x00", b"\x50\x01",
        source, target, NULL, boolean(False), NULL if client_receives else u32(0)]))


def flow_frame(handle, credit, next_out=0):
    return frame(described(0x13, [u32(0), u32(100000), u32(next_out), u32(100000), u32(handle),
                                  u32(0), u32(credit), NULL, boolean(False)]))


def transfer_frame(handle, did, settled, more, payload, aborted=False):
    return frame(described(0x14, [u32(handle), u32(did), binary(struct.pack(">I", did)), u32(0),
                                  boolean(settled), boolean(more), NULL, NULL, boolean(False),
                                  boolean(aborted)]), payload=payload)


def disposition_frame(first, last):
    accepted = b"\x00\x53\x24\x45"
    return frame(described(0x15, [boolean(True), u32(first), u32(last), boolean(False), accepted]))


def message(message_id, body):
    props = described(0x73, [string(message_id)])
    return props + b"\x00\x53\x77" + string(body)


def nested_open():
    nested = b"\x00\x53\x77" * 10_000 + b"\x40"
    props = b"\xd1" + struct.pack(">II", len(nested) + 4 + 3, 2) + b"\xa3\x01k" + nested
    fields = b"\xa1\x01x" + b"\x40" * 8 + props
    body = b"\x00\x53\x10\xd0" + struct.pack(">II", len(fields) + 4, 10) + fields
    return struct.pack(">I", len(body) + 8) + b"\x02\x00\x00\x00" + body


PERFORMATIVES = {0x10: "open", 0x11: "begin", 0x12: "attach", 0x13: "flow", 0x14: "transfer",
                 0x15: "disposition", 0x16: "detach", 0x17: "end", 0x18: "close"}


class Raw:
    def __init__(self, port, timeout=5):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)

    def header(self):
        self.s.sendall(HEADER)
        got = self.read_exact(8)
        if got != HEADER:
            raise AttackOdd(f"the server's protocol header was {got!r}")

    def read_exact(self, n):
        b = b""
        while len(b) < n:
            part = self.s.recv(n - len(b))
            if not part:
                raise EOFError
            b += part
        return b

    def recv(self):
        """The next performative's name and its frame's body; heartbeats passed over."""
        while True:
            size = struct.unpack(">I", self.read_exact(4))[0]
            rest = self.read_exact(size - 4)
            body = rest[rest[0] * 4 - 4:]
            if not body:
                continue
            return PERFORMATIVES.get(body[2], hex(body[2])), body

    def until(self, name):
        while True:
            got, body = self.recv()
            if got == name:
                return body
            if got in ("close", "end", "detach") and name not in ("close", "end", "detach"):
                raise AttackOdd(f"{got} while waiting for {name}: {body[:300]!r}")

    def session(self):
        self.header()
        self.s.sendall(open_frame())
        self.until("open")
        self.s.sendall(begin_frame())
        self.until("begin")

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


class AttackOdd(Exception):
    """The server answered an attack other than expected."""


def attack_silent(srv, r):
    socks = []
    for _ in range(r.randint(5, 40)):
        socks.append(socket.create_connection(("127.0.0.1", srv.port), timeout=15))
    time.sleep(r.uniform(1, 4))
    if r.random() < 0.5:
        # Held past the handshake time-out (10 s): the server closes each.
        for s in socks:
            s.settimeout(15)
            s.recv(1)
    for s in socks:
        s.close()


def attack_slowloris(srv, r):
    raw = Raw(srv.port, timeout=15)
    data = HEADER + open_frame("slow")
    try:
        for b in data:
            raw.s.sendall(bytes([b]))
            time.sleep(r.uniform(0.3, 1.0))
            if stop.is_set():
                break
    except (BrokenPipeError, ConnectionResetError):
        pass  # closed at the handshake time-out: as meant
    raw.close()


def attack_garbage(srv, r):
    raw = Raw(srv.port, timeout=15)  # closed at once, or at the handshake time-out (10 s)
    raw.header()
    kind = r.choice(["random", "huge-size", "tiny-size", "not-amqp-type"])
    if kind == "random":
        raw.s.sendall(bytes(r.getrandbits(8) for _ in range(r.randint(1, 4096))))
    elif kind == "huge-size":
        raw.s.sendall(struct.pack(">IBBH", 0xFFFFFFF0, 2, 0, 0) + b"\x00" * 64)
    elif kind == "tiny-size":
        raw.s.sendall(struct.pack(">IBBH", 3, 2, 0, 0))
    else:
        raw.s.sendall(struct.pack(">IBBH", 16, 2, 9, 0) + b"\x00" * 8)
    # The server closes it (a close frame, or the socket) within seconds; never hangs.
    try:
        while True:
            raw.recv()
    except (EOFError, ConnectionResetError):
        pass
    except socket.timeout:
        raise AttackOdd(f"garbage ({kind}): still open past the handshake time-out")
    finally:
        raw.close()


def attack_nested(srv, r):
    raw = Raw(srv.port)
    raw.header()
    raw.s.sendall(nested_open())
    body = raw.until("close")
    raw.close()
    if b"64 levels" not in body:
        raise AttackOdd(f"nested: a close without the depth error: {body[:200]!r}")


def attack_disposition(srv, r, n):
    """Sends 3 messages to the topic `events` on a raw link, receives them from
    events/subscriptions/all, then settles 0..=2^32-1 in one disposition."""
    raw = Raw(srv.port)
    step = "session"
    try:
        raw.session()
        step = "attach a sender to events"
        raw.s.sendall(attach_frame(0, "events", False))
        raw.until("flow")
        for i in range(3):
            raw.s.sendall(transfer_frame(0, i, True, False, message(f"attack-{n}-{i}", "x")))
        step = "attach a receiver to events/subscriptions/all"
        raw.s.sendall(attach_frame(1, "events/subscriptions/all", True))
        raw.until("attach")
        raw.s.sendall(flow_frame(1, 3, next_out=3))
        got = 0
        while got < 3:
            step = f"transfer {got + 1} of 3 (after a flow of 3 credits)"
            raw.until("transfer")
            got += 1
        t = time.monotonic()
        step = "the disposition's answer"
        raw.s.sendall(disposition_frame(0, 0xFFFFFFFF))
        raw.until("disposition")
        took = time.monotonic() - t
    except socket.timeout:
        raise AttackOdd(f"no answer within 5 s waiting for {step}")
    raw.close()
    if took > 2:
        raise AttackOdd(f"disposition over every id answered in {took:.1f} s")


def attack_unfinished(srv, r, n):
    """Multi-frame transfers to a queue the real consumers read, never finished (or aborted):
    the first frame holds a whole properties section, so one taken as a send would be received
    as a message no producer sent."""
    raw = Raw(srv.port)
    raw.session()
    links = r.randint(1, 3)
    for h in range(links):
        raw.s.sendall(attach_frame(h, r.choice(QUEUES), False))
        raw.until("flow")
    for h in range(links):
        first = message(f"attack-unfinished-{n}-{h}", "y" * 100)[:-1]  # cut in the body
        raw.s.sendall(transfer_frame(h, h, False, True, first))
        for _ in range(r.randint(0, 4)):
            raw.s.sendall(transfer_frame(h, h, False, True, b"\x40" * r.randint(1, 100_000)))
        if r.random() < 0.3:
            raw.s.sendall(transfer_frame(h, h, False, False, b"", aborted=True))
    time.sleep(r.uniform(0, 2))
    raw.close()


attacks = collections.Counter()
attack_odd = []
attack_skipped = collections.Counter()


def run_attack(srv, kind, seed, n):
    r = random.Random(seed)
    epoch = srv.epoch
    if not srv.up.is_set():
        attack_skipped[kind] += 1
        return
    try:
        if kind == "disposition":
            attack_disposition(srv, r, n)
        elif kind == "unfinished":
            attack_unfinished(srv, r, n)
        else:
            globals()[f"attack_{kind}"](srv, r)
        with lock:
            attacks[kind] += 1
    except (AttackOdd, OSError, EOFError) as e:
        with lock:
            if srv.epoch != epoch or not srv.up.is_set():
                attack_skipped[kind] += 1  # the server was killed under it
            elif isinstance(e, AttackOdd):
                attack_odd.append(f"{kind}: {e}")
                attacks[kind] += 1
            else:
                attack_odd.append(f"{kind}: {type(e).__name__} {e}")
                attacks[kind] += 1


KINDS = ["silent", "slowloris", "garbage", "nested", "disposition", "unfinished"]


def attacker(srv):
    r = random.Random(f"{args.seed}-attacks")
    n = 0
    running = []
    while not stop.is_set():
        # Each kind once first, then at random.
        kind = KINDS[n] if n < len(KINDS) else r.choice(KINDS)
        t = threading.Thread(target=run_attack, args=(srv, kind, r.random(), n), daemon=True)
        t.start()
        running.append(t)
        n += 1
        stop.wait(r.uniform(0.2, 1.2))
        running = [t for t in running if t.is_alive()]
        while len(running) > 8 and not stop.is_set():
            time.sleep(0.1)
            running = [t for t in running if t.is_alive()]
    for t in running:
        t.join(20)


# ---------------------------------------------------------------- the run

def drain(srv):
    """Receives (and completes) everything left in each queue and its dead-letter queue."""
    dead = 0
    deadline = time.monotonic() + 120
    with client(srv.conn) as c:
        while time.monotonic() < deadline:
            with lock:
                missing = [i for i in acked if delivered[i] == 0]
            got = 0
            for q in QUEUES:
                for sub in (None, ServiceBusSubQueue.DEAD_LETTER):
                    try:
                        with c.get_queue_receiver(q, sub_queue=sub, max_wait_time=1) as r:
                            while True:
                                ms = r.receive_messages(max_message_count=100, max_wait_time=1)
                                if not ms:
                                    break
                                for m in ms:
                                    take(r, m, q)
                                got += len(ms)
                                dead += len(ms) if sub else 0
                    except Exception as e:  # noqa: BLE001
                        note_error("drain", e)
            if args.verbose:
                log(f"drain: {got} received this round, {len(missing)} acknowledged not yet received")
            if got == 0 and not missing:
                break
            if got == 0:
                # Messages still locked by a receiver the kill cut off: their locks lapse.
                time.sleep(1)
        left = 0
        for q in QUEUES:
            for sub in (None, ServiceBusSubQueue.DEAD_LETTER):
                with c.get_queue_receiver(q, sub_queue=sub) as r:
                    left += len(r.peek_messages(max_message_count=100))
    return dead, left


def main():
    # Stopped from outside (SIGTERM, Ctrl+C): the server started here is stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if not os.path.exists(SBP):
        raise SystemExit(f"{SBP} not found (build it, or set SBP=path)")
    tmp = tempfile.mkdtemp(prefix="sbp-soak-")
    srv = Server(tmp)
    srv.start()
    log(f"sbp serve on 127.0.0.1:{srv.port} (state {srv.state}); {args.seconds:.0f} s, seed {args.seed}, "
        f"{KILLS} kills, RSS bound {args.rss_mb:.0f} MB")
    kill_at = sorted(rng.uniform(0.1, 0.85) * args.seconds for _ in range(KILLS))
    threads = []
    for q in QUEUES:
        for k in range(args.producers):
            threads.append(threading.Thread(target=producer, args=(srv, q, k), daemon=True))
        for _ in range(args.consumers):
            threads.append(threading.Thread(target=consumer, args=(srv, q), daemon=True))
    threads.append(threading.Thread(target=attacker, args=(srv,), daemon=True))
    for t in threads:
        t.start()
    kills = []
    try:
        while now() < args.seconds:
            srv.sample()
            if kill_at and now() >= kill_at[0]:
                kill_at.pop(0)
                with lock:
                    acked_then = len(acked)
                srv.kill9()
                t = now()
                srv.start()
                kills.append((t, acked_then))
                log(f"kill -9 #{len(kills)} at {t:.1f} s ({acked_then} acknowledged so far); "
                    f"listening again after {srv.starts[-1][1]:.2f} s")
            time.sleep(0.2)
        stop.set()
        log("traffic stopped; waiting for clients and attacks to finish")
        for t in threads:
            t.join(30)
        srv.sample()
        log("draining")
        drain_started = now()
        dead, left = drain(srv)
        drain_took = now() - drain_started
        log(f"drained in {drain_took:.1f} s")
        time.sleep(1)
        after = srv.sample()
    finally:
        for path in srv.logs:
            text = open(path, errors="replace").read()
            if "panicked" in text:
                fail(f"the server panicked ({path}): " + text[text.index("panicked") - 200:][:800])
        alive = srv.proc.poll() is None
        srv.stop()
    if not alive:
        fail(f"the server exited on its own: {open(srv.logs[-1]).read()[-1000:]}")

    # -------------------------------------------------------- checks and summary
    missing = sorted(i for i in acked if delivered[i] == 0)
    dup_delivered = sum(1 for c in delivered.values() if c > 1)
    dup_completed = sum(1 for c in completed.values() if c > 1)
    unacked_received = sum(1 for i in delivered if i in attempted and i not in acked)
    peak = max(kb for _, kb, _, _ in srv.rss)
    per_epoch = collections.defaultdict(int)
    for _, kb, e, _ in srv.rss:
        per_epoch[e] = max(per_epoch[e], kb)
    bound_kb = args.rss_mb * 1024
    if missing:
        fail(f"{len(missing)} acknowledged messages never received, e.g. {missing[:10]}")
    if stranger:
        fail(f"{len(stranger)} messages received that no producer sent, e.g. {stranger[:5]}")
    if bad_body:
        fail(f"{len(bad_body)} messages whose body is not theirs, e.g. {bad_body[:5]}")
    if peak > bound_kb:
        fail(f"the server's RSS reached {peak / 1024:.0f} MB, over the bound of {args.rss_mb:.0f} MB")
    if after is None or after > bound_kb:
        fail(f"the server's RSS after the drain: {after} kB")
    if left:
        fail(f"{left} messages left in the queues after the drain")
    if attack_odd:
        fail(f"{len(attack_odd)} attacks answered other than expected: {attack_odd[:5]}")
    if len(acked) < 100 * (1 + args.seconds // 60):
        fail(f"only {len(acked)} messages acknowledged in {args.seconds:.0f} s: the clients were stopped")
    # The real clients go on: the longest time without an acknowledged send, and after each
    # kill the time to the first send acknowledged after the restart.
    times = sorted(acked.values())
    gaps = [b - a for a, b in zip(times, times[1:])]
    longest = max(gaps) if gaps else float("inf")
    recoveries = []
    for t, _ in kills:
        after_kill = [x for x in times if x > t]
        recoveries.append(after_kill[0] - t if after_kill else float("inf"))
    if any(r > 30 for r in recoveries):
        fail(f"after a kill, no send acknowledged for {max(recoveries):.1f} s")
    in_kill = lambda a, b: any(a - 1 <= t <= b for t, _ in kills)  # noqa: E731
    quiet = max((b - a for a, b in zip(times, times[1:]) if not in_kill(a, b)), default=0)
    if quiet > 15:
        fail(f"{quiet:.1f} s without an acknowledged send, away from any kill")
    print()
    print("== fault and soak summary")
    print(f"duration            {now():.1f} s ({args.seconds:.0f} s of traffic, drain {drain_took:.1f} s), seed {args.seed}")
    print(f"messages            {len(attempted)} sent, {len(acked)} acknowledged, "
          f"{len(delivered)} distinct received ({sum(delivered.values())} deliveries), "
          f"{sum(completed.values())} completions returned")
    print(f"at-least-once       {len(missing)} acknowledged missing; {dup_delivered} delivered more than once; "
          f"{dup_completed} completed more than once; {unacked_received} received whose send was not acknowledged; "
          f"{dead} from dead-letter queues at the drain; {left} left")
    print(f"kills               {len(kills)} at " + ", ".join(f"{t:.1f}s" for t, _ in kills)
          + "; restart to listening " + ", ".join(f"{d:.2f}s" for _, d in srv.starts[1:])
          + "; first send acknowledged after each " + ", ".join(f"{r:.1f}s" for r in recoveries))
    print(f"longest pause       {longest:.1f} s between acknowledged sends ({quiet:.1f} s away from kills)")
    print(f"attacks             {sum(attacks.values())} made: " + ", ".join(f"{k} {attacks[k]}" for k in KINDS)
          + f"; {sum(attack_skipped.values())} cut by a kill; {len(attack_odd)} answered other than expected")
    print(f"server RSS          peak {peak / 1024:.1f} MB (per start: "
          + ", ".join(f"{kb / 1024:.0f}" for _, kb in sorted(per_epoch.items()))
          + f" MB), after the drain {(after or 0) / 1024:.1f} MB; bound {args.rss_mb:.0f} MB; {len(srv.rss)} samples")
    marks = [srv.rss[int(i * (len(srv.rss) - 1) / 6)] for i in range(7)]
    print("RSS over the run    " + "; ".join(f"{t:.0f}s {a} acked {kb / 1024:.0f} MB" for t, kb, _, a in marks))
    print("client errors       " + (", ".join(f"{k} {v}" for k, v in sorted(errors.items())) or "none"))
    if failures:
        print(f"\nFAILED ({len(failures)}):")
        for f in failures:
            print("  -", f)
        print(f"server logs kept in {tmp}")
        sys.exit(1)
    print("ok   nothing acknowledged lost, nothing received that was not sent, RSS within its bound")
    import shutil
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
