"""Shared helpers for the reliability end-to-end tests: run the real binary, talk HTTP to it,
read its SQLite file read-only and its /metrics text.

Not a test itself (run-all.sh runs only *_test.py)."""

import contextlib
import http.client
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("LAM_BIN") or os.path.join(ROOT, ".build", "debug", "live-activity-monitor")
NOBODY = 65534


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def log(message):
    print(message, flush=True)


class Server:
    """One `serve` process on port 0; stderr is collected in `self.log`."""

    def __init__(self, db, *args, env=None, user=None, wait_ready=True):
        command = [BIN, "serve", "--port", "0", "--db", db, *args]
        if user is not None:
            command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] + command
        environment = dict(os.environ)
        environment.update(env or {})
        self.started_at = time.monotonic()
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=environment)
        self.log = ""
        self._listening = threading.Event()
        self.port = None
        threading.Thread(target=self._read_log, daemon=True).start()
        if not self._listening.wait(30):
            self.process.kill()
            raise Failure(f"server did not start: {self.log}")
        check(self.port is not None, f"server exited at start: {self.log}")
        if wait_ready:
            self.wait_ready()

    def _read_log(self):
        for raw in self.process.stderr:
            line = raw.decode("utf-8", "replace")
            self.log += line
            m = re.search(r"listening on http://\S+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                self._listening.set()
        self._listening.set()

    def connection(self, timeout=30):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None):
        """(status, headers dict, body text) on a fresh connection."""
        c = self.connection()
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode("utf-8", "replace")
        finally:
            c.close()

    def post(self, events):
        return self.request("POST", "/v1/events", json.dumps(events), {"Content-Type": "application/json"})

    def wait_ready(self, timeout=30):
        """Seconds from process start until /-/ready answered 200."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                last = self.request("GET", "/-/ready")
                if last[0] == 200:
                    return time.monotonic() - self.started_at
            except OSError as e:
                last = e
            time.sleep(0.01)
        raise Failure(f"not ready after {timeout} s: {last}")

    def metrics(self):
        status, _, text = self.request("GET", "/metrics")
        check(status == 200, f"/metrics answered {status}")
        return parse_metrics(text)

    def alive(self):
        return self.process.poll() is None

    def kill9(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        """SIGTERM and wait; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


def parse_metrics(text):
    """{series (name{labels}): value} for every sample line."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        series, value = line.rsplit(" ", 1)
        out[series] = float(value)
    return out


def total(metrics, name):
    """Sum of every series of one family (exact name, any labels)."""
    return sum(v for k, v in metrics.items() if k == name or k.startswith(name + "{"))


@contextlib.contextmanager
def read_only(db):
    """A read-only connection to the server's file (WAL lets it read while the server writes),
    closed on leaving the block."""
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        yield connection
    finally:
        connection.close()


def run(arguments):
    return subprocess.run([BIN, *arguments], capture_output=True, text=True, timeout=600)


def main(tests):
    """Runs each (name, function); prints PASS/FAIL lines and exits 1 on any failure."""
    failed = 0
    for name, function in tests:
        started = time.monotonic()
        try:
            function()
            log(f"PASS {name} ({time.monotonic() - started:.1f} s)")
        except Exception as e:  # report every kind of failure, then go on with the next test
            failed += 1
            log(f"FAIL {name}: {type(e).__name__}: {e}")
            if not isinstance(e, Failure):
                traceback.print_exc()
    sys.exit(1 if failed else 0)
