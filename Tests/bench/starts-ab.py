#!/usr/bin/env python3
"""starts-ab.py DB ROUNDS N BIN[@DB2]... [--uuid] : start each server's `serve` on DB in turn (the order
alternating per round), post N new `activity.started` events as NDJSON (batches of 500, 2 client
threads, ids new to each run), and print the rate and the server's CPU per event by thread
(utime+stime from /proc/PID/task/*/stat), then per binary the medians. What a new activity costs
the writer at the fleet size of DB (its indexes' insertions). The file grows by N live activities
per run: give it a copy (PERFORMANCE.md, session 25). BIN@DB2 runs that binary on DB2 instead:
an older build on a copy of DB at its version (session 34). --uuid: the activity and booking ids
random UUIDs, as ActivityKit's and most clients' (else a prefix and a number, each beside the last)."""
import os, signal, subprocess, sys, time, statistics, json, uuid
from proctools import free_port, post_ndjson, threads, wait_ready
args = [a for a in sys.argv[1:] if a != "--uuid"]
uuids = len(args) < len(sys.argv) - 1  # activity and booking ids as random UUIDs (ActivityKit's)
db, rounds, n, bins = args[0], int(args[1]), int(args[2]), args[3:]
files = {b: (b.split("@", 1) + [db])[1] for b in bins}
label = {b: "@".join(os.path.basename(part) for part in b.split("@", 1)) for b in bins}
def by_name(pid):
    out = {}
    for name, cpu in threads(pid).values(): out[name] = out.get(name, 0) + cpu
    return out
def start(prefix, i, t):
    activity, booking = (str(uuid.uuid4()).upper(), str(uuid.uuid4()).upper()) if uuids else (f"{prefix}a{i}", f"{prefix}BK{i}")
    return json.dumps({"id": f"{prefix}s{i}", "type": "activity.started", "activity_id": activity,
        "booking_id": booking, "attributes_type": "TimerWidgetAttributes", "occurred_at": t,
        "app": "com.example.timer", "attributes": {"startedAt": int(t)}, "content_state": {"elapsed": 0, "paused": False},
        "relevance_score": (i % 100) / 100, "push_token": "%064x" % (i * 7919 + 12345)})
res = {b: [] for b in bins}
for r in range(rounds):
    for bi, b in enumerate(bins if r % 2 == 0 else list(reversed(bins))):
        port = free_port()
        binary = b.split("@", 1)[0]
        p = subprocess.Popen([binary, "serve", "--db", files[b], "--port", str(port)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_ready(p, port, binary)
        time.sleep(1)
        prefix = f"n{int(time.time())}r{r}b{bins.index(b)}-"  # new to this file in every run
        now = time.time()
        bodies = ["\n".join(start(prefix, i, now - 60) for i in range(k, min(k + 500, n))) for k in range(0, n, 500)]
        before = by_name(p.pid); t0 = time.monotonic()
        post_ndjson(port, bodies, clients=2)
        wall = time.monotonic() - t0; after = by_name(p.pid)
        cpu = {k: (after.get(k, 0) - before.get(k, 0)) / n * 1e6 for k in after}
        top = sorted(cpu.items(), key=lambda x: -x[1])[:4]
        total = sum(cpu.values())
        row = dict(rate=n / wall, total=total, writer=max(v for k, v in cpu.items() if "writ" in k) if any("writ" in k for k in cpu) else 0)
        res[b].append(row)
        print(f"round {r+1} {label[b]}: {n/wall:.0f} ev/s, CPU {total:.1f} us/event; " + ", ".join(f"{k} {v:.1f}" for k, v in top), flush=True)
        p.send_signal(signal.SIGINT); p.wait()
for b in bins:
    print(f"median {label[b]}: " + " ".join(f"{f} {statistics.median(x[f] for x in res[b]):.1f}" for f in ("rate", "total", "writer")))
