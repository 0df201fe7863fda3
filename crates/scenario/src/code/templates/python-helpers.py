client = ServiceBusClient.from_connection_string(CONNECTION, retry_total=0)
admin = ServiceBusAdministrationClient.from_connection_string(ADMIN_CONNECTION) if ADMIN_CONNECTION else None
start = datetime.now(timezone.utc)
began = time.monotonic()
receivers: Dict[Tuple[str, str, ServiceBusReceiveMode], ServiceBusReceiver] = {}
senders: Dict[str, ServiceBusSender] = {}
calls: Dict[str, List[ServiceBusReceivedMessage]] = {}
scheduled: Dict[str, int] = {}
differences: List[str] = []
checking = [True]
# The senders and receivers the program opens, each closed with it at the end of main's `with`.
links = ExitStack()
if admin:
    links.callback(admin.close)


def receiver(name: str, path: str, mode: ServiceBusReceiveMode) -> ServiceBusReceiver:
    key = (name, path, mode)
    if key not in receivers:
        if "/subscriptions/" in path:
            topic, subscription = path.split("/subscriptions/")
            receivers[key] = links.enter_context(client.get_subscription_receiver(topic, subscription, receive_mode=mode))
        else:
            receivers[key] = links.enter_context(client.get_queue_receiver(path, receive_mode=mode))
    return receivers[key]


def sender(path: str, topic: bool) -> ServiceBusSender:
    if path not in senders:
        senders[path] = links.enter_context(client.get_topic_sender(path) if topic else client.get_queue_sender(path))
    return senders[path]


def wait_until(ms: int) -> None:
    delay = began + ms / 1000 / SPEED - time.monotonic()
    if delay > 0:
        time.sleep(delay)


def receive(r: ServiceBusReceiver, count: int, expected: int, until: int) -> List[ServiceBusReceivedMessage]:
    # Fewer messages than asked may come at a time: ask again until the expected ones are there, or until the next step's instant (`until`, ms after the start), so that it runs on time. The first call waits at least 1 s for an expected message (a receiver's link opens within it).
    got: List[ServiceBusReceivedMessage] = []
    deadline = began + until / 1000 / SPEED
    least = 1.0
    while True:
        wait = max(deadline - time.monotonic(), least) if len(got) < expected else 0.1
        least = 0.1
        got += r.receive_messages(max_message_count=count - len(got), max_wait_time=wait)
        if len(got) >= expected or len(got) >= count or time.monotonic() >= deadline:
            return got


def counted(path: str, showed: str, until: int) -> str:
    # What peek shows of an entity (RCV-11), by State: it locks nothing and changes no DeliveryCount.
    # Asked again until it is what the playground showed (the broker's instants lag the program's by its calls: opening a link takes the first send about half a second), or until the next step's instant, for at least 1 s (a lag of the wall clock's, whatever the speed).
    r = receiver("sbp-counts", path, ServiceBusReceiveMode.PEEK_LOCK)
    deadline = max(began + until / 1000 / SPEED, time.monotonic() + 1)
    while True:
        states: Dict[str, int] = {"active": 0, "deferred": 0, "scheduled": 0}
        next_seq = 1
        try:
            for _ in range(100):
                got = r.peek_messages(max_message_count=100, sequence_number=next_seq)
                if not got:
                    break
                for m in got:
                    state = str(m.state.name).lower()
                    states[state] = states.get(state, 0) + 1
                next_seq = (got[-1].sequence_number or 0) + 1
        except Exception as e:  # noqa: BLE001 - the error is what the broker returned
            return failure(e)
        shown = ", ".join(f"{k} {v}" for k, v in states.items())
        if shown == showed or time.monotonic() >= deadline:
            return shown
        time.sleep(0.1)


def present(exists: Callable[[], bool], showed: str, until: int) -> str:
    # Whether an entity exists, as the management API reads it (a read is no activity: it keeps nothing alive, IDLE-02).
    # Asked again until it is what the playground showed (the broker's instants lag the program's by its calls), or until the next step's instant, for at least 1 s (a lag of the wall clock's, whatever the speed).
    deadline = max(began + until / 1000 / SPEED, time.monotonic() + 1)
    while True:
        shown = str(exists()).lower()
        if shown == showed or time.monotonic() >= deadline:
            return shown
        time.sleep(0.1)


def peeked(path: str, seq: int) -> Optional[ServiceBusReceivedMessage]:
    # Message `seq` of an entity as peek shows it (RCV-11), or None where it is not there.
    got = receiver("sbp-counts", path, ServiceBusReceiveMode.PEEK_LOCK).peek_messages(max_message_count=1, sequence_number=seq)
    return got[0] if got and got[0].sequence_number == seq else None


def check(what: str, showed: str, returned: str) -> None:
    if not checking[0]:
        print(f"{NOT_CHECKED}: {what}: {returned}")
    elif showed == returned:
        print(f"{SAME}: {what}: {returned}")
    else:
        differences.append(what)
        print(f"{DIFFERS}: {what}: {SHOWED} {showed}, {RETURNED} {returned}")


@contextmanager
def step(what: str, expected: Optional[str] = None) -> Iterator[None]:
    # One step's calls as one checked attempt: an error the playground did not show (or none where it showed one) is a difference named with the step, and the program goes on.
    try:
        yield
    except Exception as e:  # noqa: BLE001 - the error is what the broker returned
        check(what, expected or NO_ERROR, failure(e))
    else:
        if expected is not None:
            check(what, expected, NO_ERROR)


def summary() -> None:
    # Every difference named, and exit code 1 if there is one.
    if differences:
        print(SOME_DIFFER, "; ".join(differences))
        sys.exit(1)
    print(ALL_SAME)


def message(call: str, i: int) -> Optional[ServiceBusReceivedMessage]:
    got = calls.get(call, [])
    if i < len(got):
        return got[i]
    check(f"{call}: message {i + 1}", "received", "not received")
    return None


def seq(call: str, i: int) -> int:
    m = message(call, i)
    return m.sequence_number or -1 if m else -1


def failure(e: Exception) -> str:
    return ERRORS.get(type(e).__name__, type(e).__name__)


T = TypeVar("T")


def found(get: Callable[..., T], *names: Any) -> Optional[T]:
    # An entity's properties, or None where the namespace does not have it (the service answers 404, or an entry without content).
    try:
        return get(*names)
    except HttpResponseError as e:
        if isinstance(e, ResourceNotFoundError) or e.status_code == 404:
            return None
        raise


def ms(d: Union[timedelta, str, None]) -> str:
    # A duration as the playground writes it, in ms (the SDK reads the service's ISO 8601 duration into a timedelta).
    if isinstance(d, timedelta):
        return str(d.days * 86400000 + d.seconds * 1000 + d.microseconds // 1000)
    return str(d)


