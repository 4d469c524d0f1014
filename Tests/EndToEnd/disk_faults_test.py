"""Disk and database faults turn into 503s with a clear message and a failing /-/ready, never a
crash or a half-stored request, and the server recovers by itself when the fault goes away.

- disk full: the database on a real 8 MB tmpfs, filled up by another file (needs root and
  permission to mount, as in CI; where mounting is impossible this part says NOT RUN, and the
  max_page_count variant in the Swift suite, StoreHealthTests, still covers the same path);
- read-only: the server runs as an unprivileged user (setpriv) on files it may not write: it
  keeps serving reads and refuses writes; once the files are that user's, a restart recovers
  (SQLite keeps a database it opened read-only that way for the life of the process).
"""

import errno
import json
import os
import shutil
import subprocess
import tempfile
import time

from reliability_support import NOBODY, Failure, Server, check, log, main, read_only, total

TOKEN = "80a1" * 16


def started(activity, filler=0):
    return {"id": "e-" + activity, "type": "activity.started", "activity_id": activity, "booking_id": "BK-" + activity,
            "attributes_type": "LiveActivityAttributes", "occurred_at": time.time(), "push_token": TOKEN,
            "content_state": {"driverName": "Ana", "note": "x" * filler}}


def stored(db, ids):
    with read_only(db) as c:
        marks = ",".join("?" * len(ids))
        return c.execute(f"SELECT count(*) FROM events WHERE event_id IN ({marks})", ids).fetchone()[0]


def wait_ready(server, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, _, body = server.request("GET", "/-/ready")
        if status == 200:
            return
        time.sleep(0.2)
    raise Failure(f"/-/ready still {status} {body}")


def disk_full():
    if os.geteuid() != 0:
        log("NOT RUN disk_full on a real file system: mounting a tmpfs needs root (CI runs as root)")
        return
    mountpoint = tempfile.mkdtemp(prefix="lam-full-")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mountpoint], capture_output=True, text=True)
    if mounted.returncode != 0:
        os.rmdir(mountpoint)
        log(f"NOT RUN disk_full on a real file system: mount failed ({mounted.stderr.strip()}); "
            "StoreHealthTests covers the same path with max_page_count")
        return
    server = None
    try:
        db = os.path.join(mountpoint, "monitor.sqlite")
        server = Server(db)
        for i in range(5):
            status, _, body = server.post([started(f"before-{i}")])
            check(status == 200, f"{status} {body}")
        before = server.metrics()

        # Fill the file system to the last byte.
        with open(os.path.join(mountpoint, "filler"), "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\xa5" * 65536)
            except OSError as e:
                check(e.errno == errno.ENOSPC, f"filling failed with {e}")
            try:
                while True:
                    f.write(b"\xa5" * 512)
            except OSError:
                pass  # the last partial block is full too: that is the point
        big = [started(f"full-{i}", filler=900) for i in range(600)]   # ~600 KB: more than any WAL slack
        ids = [e["id"] for e in big]
        status, headers, body = server.post(big)
        check(status == 503, f"disk full answered {status} {body[:200]}")
        message = json.loads(body)["error"]
        check("full" in message and "nothing from this request was stored" in message, f"unclear message: {message}")
        check(headers.get("retry-after") == "5", f"no Retry-After: {headers}")
        status, _, ready = server.request("GET", "/-/ready")
        check(status == 503 and "not ready" in ready and "full" in ready, f"/-/ready answered {status} {ready}")
        check(server.alive(), "the server died")
        check(server.request("GET", "/-/healthy")[0] == 200, "not even healthy")
        check(stored(db, ids) == 0, "part of the refused request was stored")
        status, _, body = server.request("GET", "/api/activities/full-0")
        check(status == 404, f"the refused activity exists: {status}")
        after = server.metrics()
        check(total(after, "liveactivity_ingest_events_total") == total(before, "liveactivity_ingest_events_total"),
              "a refused request was counted")
        check(after.get('liveactivity_ingest_rejected_total{reason="unavailable"}') == 1, "the 503 was not counted")
        # Still full: the probe must not be fooled by WAL space SQLite already has.
        time.sleep(1.1)
        status, _, ready = server.request("GET", "/-/ready")
        check(status == 503, f"ready while the disk is still full: {ready}")
        log(f"disk full: POST → 503 {message!r}; /-/ready → 503 {ready.strip()!r}")

        os.remove(os.path.join(mountpoint, "filler"))
        wait_ready(server)
        status, _, body = server.post(big)
        check(status == 200 and json.loads(body)["accepted"] == len(big), f"after freeing space: {status} {body[:200]}")
        check(stored(db, ids) == len(ids), "the retried request is not all there")
        with read_only(db) as c:
            check(c.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "integrity_check is not ok")
        check(server.stop() == 0, "unclean stop")
        server = None
        log("disk full: space freed → /-/ready 200 and the same request stored whole")
    finally:
        if server is not None:
            server.kill9()
        subprocess.run(["umount", mountpoint], check=False)
        os.rmdir(mountpoint)


def read_only_database():
    directory = tempfile.mkdtemp(prefix="lam-ro-")
    db = os.path.join(directory, "monitor.sqlite")
    server = Server(db)                      # created writable, with one activity
    check(server.post([started("kept")])[0] == 200, "setup post failed")
    check(server.stop() == 0, "setup stop failed")
    files = [os.path.join(directory, f) for f in os.listdir(directory)]   # the file, its -wal and -shm
    as_root = os.geteuid() == 0
    if as_root:
        # Root writes any file: run the server as nobody, on root's files (mode 644, dir 755).
        os.chmod(directory, 0o755)
    else:
        for f in files:
            os.chmod(f, 0o444)
    user = NOBODY if as_root else None
    server = Server(db, user=user, wait_ready=False)
    try:
        status, _, ready = server.request("GET", "/-/ready")
        check(status == 503 and "read-only" in ready, f"/-/ready answered {status} {ready}")
        status, headers, body = server.post([started("refused")])
        check(status == 503, f"read-only POST answered {status} {body}")
        message = json.loads(body)["error"]
        check("read-only" in message and "nothing from this request was stored" in message, f"unclear: {message}")
        check(headers.get("retry-after") == "5", f"no Retry-After: {headers}")
        check(server.request("GET", "/api/activities/kept")[0] == 200, "reads should still work")
        check(server.request("GET", "/api/activities/refused")[0] == 404, "the refused activity exists")
        check(server.request("GET", "/metrics")[0] == 200, "/metrics should still work")
        time.sleep(1.1)   # past the probe interval: the probe must not call it writable
        check(server.request("GET", "/-/ready")[0] == 503, "ready on a read-only database")
        check(server.alive(), "the server died")
        check(server.stop() == 0, "unclean stop")
        log(f"read-only: POST → 503 {message!r}; /-/ready → 503 {ready.strip()!r}")

        for f in [directory] + files:
            if as_root:
                os.chown(f, NOBODY, NOBODY)
            else:
                os.chmod(f, 0o755 if f == directory else 0o644)
        server = Server(db, user=user)
        status, _, body = server.post([started("refused")])
        check(status == 200, f"after the fix: {status} {body}")
        check(server.request("GET", "/api/activities/kept")[0] == 200, "lost the old activity")
        check(server.stop() == 0, "unclean stop")
        log("read-only: files made writable + restart → /-/ready 200 and ingest 200")
    finally:
        if server.alive():
            server.kill9()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main([("disk_full_is_503_and_recovers", disk_full), ("read_only_is_503_and_recovers", read_only_database)])
