"""A headless Chromium driven over the DevTools protocol on a pipe, with the standard library.

`chromium --remote-debugging-pipe` reads CDP commands from fd 3 and writes replies to fd 4,
each one JSON object followed by a NUL byte. That is enough for Runtime.evaluate,
Page.navigate and Page.captureScreenshot without websockets or a driver.
"""

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


class CDPError(RuntimeError):
    pass


class Chromium:
    def __init__(self, width=1440, height=1000, scale=1, binary=None, env=None):
        self.binary = binary or shutil.which("chromium") or shutil.which("chromium-browser")
        if not self.binary:
            raise CDPError("chromium not found (apt-get install -y chromium)")
        self.width, self.height, self.scale = width, height, scale
        self.profile = tempfile.mkdtemp(prefix="lam-chromium-")
        self.log_path = os.path.join(self.profile, "chromium.log")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def place_pipes():
            # Move both ends out of the way first so that putting one on 3 or 4 cannot
            # clobber the other, then give Chromium exactly fd 3 (commands) and fd 4 (replies).
            a = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 20)
            b = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 20)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [
            self.binary, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
            f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--disable-background-networking", "--disable-sync", "--disable-component-update",
            "--hide-scrollbars", "--mute-audio", "--force-color-profile=srgb",
            f"--force-device-scale-factor={scale}", "about:blank",
        ]
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
            pass_fds=(3, 4), preexec_fn=place_pipes, env=env,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._next_id = 0
        self.events = []  # every CDP event received, in order
        self.session = None

    # -- protocol ---------------------------------------------------------------------------

    def send(self, method, params=None, session=True, timeout=15):
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            n = os.write(self._to_chrome, data)
            data = data[n:]
        want = self._next_id
        deadline = time.monotonic() + timeout
        while True:
            for reply in self._read(deadline, method):
                if reply.get("id") == want:
                    if "error" in reply:
                        raise CDPError(f"{method}: {reply['error']}")
                    return reply.get("result", {})

    def _read(self, deadline, what):
        """Reads what is available (waiting until `deadline`), records events, returns replies."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise CDPError(f"timed out waiting for {what}")
        ready, _, _ = select.select([self._from_chrome], [], [], remaining)
        if not ready:
            raise CDPError(f"timed out waiting for {what}")
        chunk = os.read(self._from_chrome, 1 << 20)
        if not chunk:
            raise CDPError(f"chromium closed the pipe (see {self.log_path})")
        self._buf += chunk
        out = []
        while b"\0" in self._buf:
            raw, self._buf = self._buf.split(b"\0", 1)
            msg = json.loads(raw)
            if "method" in msg:
                self.events.append(msg)
            else:
                out.append(msg)
        return out

    def pump(self, seconds):
        """Lets time pass while still collecting events."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self._read(deadline, "events")
            except CDPError as e:
                if "timed out" not in str(e):
                    raise

    # -- page -------------------------------------------------------------------------------

    def open_page(self):
        targets = self.send("Target.getTargets", session=False)["targetInfos"]
        page = next((t for t in targets if t["type"] == "page"), None)
        target_id = page["targetId"] if page else self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target_id, "flatten": True}, session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": self.scale, "mobile": False})
        # Dialogs (alert, confirm) would block the page: record and dismiss them.
        return self

    def navigate(self, url, timeout=15):
        self.send("Page.navigate", {"url": url})
        self.wait_for("document.readyState === 'complete'", timeout=timeout, what=f"load of {url}")

    def evaluate(self, expression, timeout=15):
        """The value of a JavaScript expression (awaited if a promise), as JSON-able data."""
        result = self.send("Runtime.evaluate", {
            "expression": expression, "returnByValue": True, "awaitPromise": True, "userGesture": True,
        }, timeout=timeout)
        if "exceptionDetails" in result:
            d = result["exceptionDetails"]
            text = d.get("exception", {}).get("description") or d.get("text")
            raise CDPError(f"evaluate failed: {text}\n{expression[:300]}")
        return result["result"].get("value")

    def wait_for(self, expression, timeout=10, interval=0.1, what=None):
        """Polls a JavaScript expression until it is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        last_error = None
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(expression)
                if value:
                    return value
            except CDPError as e:
                last_error = e
            self.pump(interval)
        raise CDPError(f"timed out after {timeout}s waiting for {what or expression}" + (f" ({last_error})" if last_error else ""))

    def dialogs(self):
        return [e for e in self.events if e["method"] == "Page.javascriptDialogOpening"]

    def problems(self):
        """Uncaught exceptions, console errors and CSP violations seen so far."""
        out = []
        for e in self.events:
            if e["method"] == "Runtime.exceptionThrown":
                d = e["params"]["exceptionDetails"]
                out.append("exception: " + (d.get("exception", {}).get("description") or d.get("text", "")))
            elif e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error":
                entry = e["params"]["entry"]
                out.append(f"log: {entry['text']}" + (f" ({entry['url']})" if entry.get("url") else ""))
            elif e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] == "error":
                out.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in e["params"]["args"]))
        return out

    def screenshot(self, path, full_height=None):
        if full_height:
            self.send("Emulation.setDeviceMetricsOverride",
                      {"width": self.width, "height": full_height, "deviceScaleFactor": self.scale, "mobile": False})
            self.pump(0.3)
        data = self.send("Page.captureScreenshot", {"format": "png"}, timeout=30)["data"]
        if full_height:
            self.send("Emulation.setDeviceMetricsOverride",
                      {"width": self.width, "height": self.height, "deviceScaleFactor": self.scale, "mobile": False})
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close", session=False, timeout=3)
                except (CDPError, OSError):
                    pass
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=5)
        finally:
            for fd in (self._to_chrome, self._from_chrome):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._log.close()
            shutil.rmtree(self.profile, ignore_errors=True)
