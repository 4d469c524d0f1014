"""Runs the real live-activity-monitor binary on a free port for the dashboard's end-to-end test."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class Server:
    def __init__(self, binary=None, read_token=None, extra_args=()):
        self.binary = binary or os.environ.get("LAM_BIN") or os.path.join(REPO, ".build/debug/live-activity-monitor")
        if not os.path.isabs(self.binary):
            self.binary = os.path.join(REPO, self.binary)
        if not os.access(self.binary, os.X_OK):
            raise RuntimeError(f"no server binary at {self.binary} (build it, or set LAM_BIN)")
        self.dir = tempfile.mkdtemp(prefix="lam-e2e-")
        self.read_token = read_token
        args = [self.binary, "serve", "--port", "0", "--db", os.path.join(self.dir, "db.sqlite"),
                "--web-root", os.path.join(REPO, "Web"), *extra_args]
        if read_token:
            path = os.path.join(self.dir, "read-token")
            with open(path, "w") as f:
                f.write(read_token + "\n")
            args += ["--read-token-file", path]
        self.log_path = os.path.join(self.dir, "server.log")
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log)
        self.port = self._wait_for_port(timeout=15)
        self.base = f"http://127.0.0.1:{self.port}"

    def _wait_for_port(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as f:
                m = re.search(rb"listening on http://127\.0\.0\.1:(\d+)", f.read())
            if m:
                return int(m.group(1))
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}: {self.log()}")
            time.sleep(0.05)
        raise RuntimeError(f"server did not log its port within {timeout}s: {self.log()}")

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")[-4000:]

    def request(self, method, path, body=None, headers=None, timeout=10):
        """(status, headers, parsed JSON or text) — HTTP errors are returned, not raised."""
        data = None if body is None else json.dumps(body).encode()
        h = {"Content-Type": "application/json"} if data is not None else {}
        if self.read_token and path.startswith("/api/"):
            h["Authorization"] = f"Bearer {self.read_token}"
        h.update(headers or {})
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as res:
                status, hdrs, raw = res.status, dict(res.headers), res.read()
        except urllib.error.HTTPError as e:
            status, hdrs, raw = e.code, dict(e.headers), e.read()
        text = raw.decode(errors="replace")
        try:
            return status, hdrs, json.loads(text)
        except ValueError:
            return status, hdrs, text

    def ingest(self, events):
        status, _, body = self.request("POST", "/v1/events", events)
        if status != 200:
            raise RuntimeError(f"POST /v1/events answered {status}: {json.dumps(body)[:2000]}")
        return body

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
