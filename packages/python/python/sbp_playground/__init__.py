"""sbp serve for tests: start it on free loopback ports, read its connection strings, move its
clock, reset it. The pytest fixture (`sbp_serve`) is in `sbp_playground.pytest_plugin`."""

import contextlib
import json
import os
import pathlib
import shutil
import subprocess
import sysconfig
import tempfile
import time
import urllib.request

__all__ = ["Sbp", "sbp_binary", "sbp_serving"]

# How long a server may take to write its ready file.
START_TIMEOUT_SECONDS = 30


def sbp_binary():
    """The sbp to run: $SBP, else the one this package installed, else sbp on PATH."""
    named = os.environ.get("SBP")
    if named:
        return named
    exe = "sbp.exe" if os.name == "nt" else "sbp"
    installed = pathlib.Path(sysconfig.get_path("scripts")) / exe
    if installed.is_file():
        return str(installed)
    found = shutil.which("sbp")
    if found:
        return found
    raise FileNotFoundError(
        "sbp is not installed: pip install service-bus-playground (or set SBP to its path)"
    )


class Sbp:
    """A running sbp serve: its connection strings and its test API."""

    def __init__(self, ready, certificate):
        self.connection_string = ready["connection_string"]
        self.admin_connection_string = ready["admin_connection_string"]
        self.certificate = str(certificate)
        self.http = "http://" + ready["listeners"]["http"]
        self.playground = ready.get("live")
        self.pid = ready.get("pid")

    def _post(self, path):
        request = urllib.request.Request(
            self.http + path, method="POST", headers={"x-sbp-live": "1"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)

    def advance(self, seconds):
        """Moves the broker's clock forward: what falls due meanwhile happens now."""
        return self._post(f"/live/clock?by={int(seconds * 1000)}")

    def next_event(self):
        """Moves the broker's clock to its next timer (a lock's lapse, an expiry)."""
        return self._post("/live/clock?next")

    def reset(self):
        """Back to the served entities, with no message, lock or entity made since."""
        return self._post("/reset")

    def health(self):
        """The server's listeners, as GET /health gives them."""
        with urllib.request.urlopen(self.http + "/health", timeout=10) as response:
            return json.load(response)


@contextlib.contextmanager
def sbp_serving(folder=None, entities="default"):
    """sbp serve on free loopback ports, its files (ready file, certificate, log) in `folder`
    (a temporary one when None); stopped on leaving.

    `entities`: "default" (a queue orders, a topic events with a subscription audit), None
    (none: the test makes its own through the management API), the path of a scenario or an
    emulator Config.json, or a preset ("preset:lapsed-locks-to-dlq").
    """
    with contextlib.ExitStack() as stack:
        if folder is None:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="sbp-"))
        folder = pathlib.Path(folder)
        ready_file = folder / "ready.json"
        # One left by an earlier server in this folder says nothing of this one.
        ready_file.unlink(missing_ok=True)
        certificate = folder / "localhost.pem"
        command = [sbp_binary(), "serve"]
        if entities is None:
            command.append("--no-entities")
        elif entities != "default":
            command.append(str(entities))
        command += [
            "--amqp", "127.0.0.1:0",
            "--http", "127.0.0.1:0",
            "--admin-tls", "127.0.0.1:0",
            "--tls-cert", str(certificate),
            "--ready-file", str(ready_file),
            "--quiet",
            # It ends with this process however this one ends (its end closes the pipe).
            "--stop-with-stdin",
        ]
        log_path = folder / "sbp.log"
        log = stack.enter_context(open(log_path, "w"))
        server = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            deadline = time.monotonic() + START_TIMEOUT_SECONDS
            while not ready_file.exists():
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"sbp serve did not start: {log_path.read_text()}")
                time.sleep(0.02)
            yield Sbp(json.loads(ready_file.read_text()), certificate)
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
