"""Retention against the real binary: `prune --older-than` runs while the server ingests.

The database is start-up's realistic one (startup_test.build: 70 % of the activities long
dismissed). While one client posts updates without pause, `prune` deletes the old events and
dismissed activities. Checks: every request gets a 200 and none waits long; every counter in
/metrics is what it was, except the one the client itself moved, by exactly its events; the
database file shrinks; integrity_check is ok.

Always: 50,000 events. LAM_BENCH=1 (or LAM_SOAK=1): 1,000,000 events as well.
"""

import json
import os
import shutil
import tempfile
import threading
import time

from reliability_support import Server, check, log, main, parse_metrics, read_only, run
from startup_test import build

FULL = os.environ.get("LAM_BENCH") == "1" or os.environ.get("LAM_SOAK") == "1"
VOLATILE = ("process_", "liveactivity_store_", "liveactivity_http_requests_total")


def counters(server):
    return {k: v for k, v in server.metrics().items() if not k.startswith(VOLATILE)}


def size(db):
    return sum(os.path.getsize(db + suffix) for suffix in ("", "-wal") if os.path.exists(db + suffix))


def prune_while_ingesting(events_target):
    directory = tempfile.mkdtemp(prefix="lam-retention-")
    server = None
    try:
        db = os.path.join(directory, "big.sqlite")
        events, activities, live = build(db, events_target)
        server = Server(db)
        before, size_before = counters(server), size(db)
        latencies, failures, stop = [], [], threading.Event()

        def client():
            c = server.connection()
            n = 0
            while not stop.is_set():
                n += 1
                event = {"type": "activity.updated", "activity_id": "ride-000", "occurred_at": time.time(),
                         "timestamp": time.time(), "content_state": {"driverName": "Ana", "progress": n % 100 / 100}}
                t = time.monotonic()
                c.request("POST", "/v1/events", json.dumps(event), {"Content-Type": "application/json"})
                r = c.getresponse()
                r.read()
                latencies.append(time.monotonic() - t)
                if r.status != 200:
                    failures.append(r.status)

        thread = threading.Thread(target=client, daemon=True)
        thread.start()
        started = time.monotonic()
        result = run(["prune", "--older-than", "2h", "--db", db])
        took = time.monotonic() - started
        stop.set()
        thread.join(30)
        check(result.returncode == 0, f"prune failed: {result.stderr}")
        check(not failures, f"ingest answered {failures[:5]} while pruning")
        pruned = int(result.stdout.split()[1])
        check(pruned == events * 14 // 20, f"pruned {pruned} events: {result.stdout}")

        after = counters(server)
        key = 'liveactivity_ingest_events_total{type="activity.updated"}'
        check(after.pop(key) == before.pop(key) + len(latencies), "the client's events were not all counted")
        changed = {k: (before.get(k), after.get(k)) for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
        check(not changed, f"prune changed counters: {dict(list(changed.items())[:5])}")
        with read_only(db) as c:
            check(c.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "integrity_check is not ok")
        # While ingest goes on, the final checkpoint can find the WAL in use and leave the file
        # as it was until the next pass (as `serve --retention` would run it): allow two more.
        size_after = size(db)
        for _ in range(2):
            if size_after < size_before * 0.6:
                break
            run(["prune", "--older-than", "2h", "--db", db])
            size_after = size(db)
        check(size_after < size_before * 0.6, f"the file did not shrink: {size_before} → {size_after}")
        check(server.stop() == 0, "unclean stop")
        server = None
        latencies.sort()
        log(f"retention: prune of {pruned:,} of {events:,} events ({activities * 14 // 20:,} dismissed activities) "
            f"took {took:.1f} s while a client posted {len(latencies):,} requests, all 200: median "
            f"{latencies[len(latencies) // 2] * 1000:.1f} ms, p99 {latencies[int(len(latencies) * 0.99)] * 1000:.0f} ms, "
            f"worst {latencies[-1] * 1000:.0f} ms; database + WAL {size_before / 1e6:.1f} MB → {size_after / 1e6:.1f} MB; "
            "counters unchanged")
        check(latencies[-1] < 2.0, f"an ingest waited {latencies[-1]:.2f} s behind the prune")
    finally:
        if server is not None:
            server.kill9()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    tests = [("prune_50k_while_ingesting", lambda: prune_while_ingesting(50_000))]
    if FULL:
        tests.append(("prune_1m_while_ingesting", lambda: prune_while_ingesting(1_000_000)))
    main(tests)
