#!/usr/bin/env python3
"""starts-ab.py DB ROUNDS N BIN... : start each server's `serve` on DB in turn (the order
alternating per round), post N new `activity.started` events as NDJSON (batches of 500, 2 client
threads, ids new to each run), and print the rate and the server's CPU per event by thread
(utime+stime from /proc/PID/task/*/stat), then per binary the medians. What a new activity costs
the writer at the fleet size of DB (its indexes' insertions). The file grows by N live activities
per run: give it a copy (PERFORMANCE.md, session 25)."""
import os, signal, subprocess, sys, time, statistics, json
from proctools import free_port, post_ndjson, threads, wait_ready
db, rounds, n, bins = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
def by_name(pid):
    out = {}
    for name, cpu in threads(pid).values(): out[name] = out.get(name, 0) + cpu
    return out
def start(prefix, i, t):
    return json.dumps({"id": f"{prefix}s{i}", "type": "activity.started", "activity_id": f"{prefix}a{i}",
        "booking_id": f"{prefix}BK{i}", "attributes_type": "TimerWidgetAttributes", "occurred_at": t,
        "app": "com.example.timer", "attributes": {"startedAt": int(t)}, "content_state": {"elapsed": 0, "paused": False},
        "relevance_score": (i % 100) / 100, "push_token": "%064x" % (i * 7919 + 12345)})
res = {b: [] for b in bins}
for r in range(rounds):
    for bi, b in enumerate(bins if r % 2 == 0 else list(reversed(bins))):
        port = free_port()
        p = subprocess.Popen([b, "serve", "--db", db, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_ready(p, port, b)
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
        print(f"round {r+1} {os.path.basename(b)}: {n/wall:.0f} ev/s, CPU {total:.1f} us/event; " + ", ".join(f"{k} {v:.1f}" for k, v in top), flush=True)
        p.send_signal(signal.SIGINT); p.wait()
for b in bins:
    print(f"median {os.path.basename(b)}: " + " ".join(f"{f} {statistics.median(x[f] for x in res[b]):.1f}" for f in ("rate", "total", "writer")))
