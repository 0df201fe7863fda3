import random
import threading
stops: Dict[str, threading.Event] = {}
actors: List[threading.Thread] = []
failures: Dict[str, int] = {}
rng = random.Random(1)


def failed(name: str, e: Exception) -> None:
    # A loop's operation fails as it may in the playground too (a lapsed lock, a deleted entity): counted, said once, and the loop goes on.
    failures[name] = failures.get(name, 0) + 1
    if failures[name] == 1:
        print(f"{LOOP_FAILED} {name}: {failure(e)}")


def start_producer(name: str, to: str, topic: bool, rate: float, limit: int, prefix: str, ttl_ms: int, spike: Tuple[int, int, float]) -> None:
    stop = stops.setdefault(name, threading.Event())

    def run() -> None:
        s = client.get_topic_sender(to) if topic else client.get_queue_sender(to)
        try:
            s.__enter__()
        except Exception as e:
            failed(name, e)
            return  # its entity is not there: this producer stops
        with s:
            due = time.monotonic()
            for n in range(1, limit + 1):
                if stop.is_set():
                    break
                ttl = timedelta(milliseconds=ttl_ms) if ttl_ms else None
                try:
                    s.send_messages(ServiceBusMessage("", message_id=f"{prefix}{n}", time_to_live=ttl))
                except Exception as e:
                    failed(name, e)
                at = (time.monotonic() - began) * 1000 * SPEED
                factor = spike[2] if spike[0] <= at < spike[0] + spike[1] else 1.0
                due += 1 / (rate * factor * SPEED)
                stop.wait(max(due - time.monotonic(), 0))

    actors.append(threading.Thread(target=run, daemon=True))
    actors[-1].start()


def start_consumers(name: str, path: str, instances: int, peek_lock: bool, work: Callable[[], float], crash: float, abandon: float, dead_letter: float, restart_s: float) -> None:
    stop = stops.setdefault(name, threading.Event())
    mode = ServiceBusReceiveMode.PEEK_LOCK if peek_lock else ServiceBusReceiveMode.RECEIVE_AND_DELETE

    def run() -> None:
        topic, _, subscription = path.partition("/subscriptions/")
        r = client.get_subscription_receiver(topic, subscription, receive_mode=mode) if subscription else client.get_queue_receiver(path, receive_mode=mode)
        try:
            r.__enter__()
        except Exception as e:
            failed(name, e)
            return  # its entity is not there: this consumer stops
        with r:
            while not stop.is_set():
                try:
                    got = r.receive_messages(max_message_count=1, max_wait_time=0.5)
                except Exception as e:
                    failed(name, e)
                    if failure(e) == "MessagingEntityNotFound":
                        return  # its entity is gone: this consumer stops
                    stop.wait(1)
                    continue
                for m in got:
                    stop.wait(work() / SPEED)
                    if not peek_lock or stop.is_set():
                        continue
                    draw = rng.random()
                    try:
                        if draw < crash:
                            stop.wait(restart_s / SPEED)  # crashed: its lock lapses
                        elif draw < crash + abandon:
                            r.abandon_message(m)
                        elif draw < crash + abandon + dead_letter:
                            r.dead_letter_message(m, reason="ProcessingFailed", error_description="")
                        else:
                            r.complete_message(m)
                    except Exception as e:
                        failed(name, e)

    for _ in range(instances):
        actors.append(threading.Thread(target=run, daemon=True))
        actors[-1].start()


def stop_actors(name: str) -> None:
    stops.setdefault(name, threading.Event()).set()


