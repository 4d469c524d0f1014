#!/usr/bin/env python3
"""ids-ab.py BIN DB ROUNDS N [--perf PREFIX]: what the ids' order costs the server on one file.
Each round starts `BIN serve` on DB once per kind of ids, in turn: numbered (a prefix and a
number, each new id beside the last in every index), random activity and booking ids (UUIDs,
as ActivityKit's), and random event ids too (UUID version 4); posts N new activities (a start
and 9 pushes each, NDJSON requests of 500 lines from 4 clients) at once after /-/ready, and
prints the rate and the store writer's CPU per event (/proc/PID/task/*/stat); then the medians
per kind. The file grows by N live activities a run: give it a copy (PERFORMANCE.md, session 31).
--perf PREFIX records each run (`perf record -g`) to PREFIX-KIND-ROUND.data."""
import json, signal, statistics, subprocess, sys, time, uuid
from proctools import free_port, post_ndjson, threads, wait_ready

args = sys.argv[1:]
perf = None
if "--perf" in args:
    i = args.index("--perf"); perf = args[i + 1]; del args[i:i + 2]
binary, db, rounds, n = args[0], args[1], int(args[2]), int(args[3])
KINDS = ("numbered", "random-activities", "random-all")


def lines(kind, prefix, now):
    """The N activities' NDJSON lines, in order: each start, then its 9 pushes."""
    rand = kind != "numbered"
    out = []
    for i in range(n):
        aid = str(uuid.uuid4()).upper() if rand else f"{prefix}a{i}"
        bk = str(uuid.uuid4()) if rand else f"{prefix}BK{i}"
        def eid(k): return str(uuid.uuid4()) if kind == "random-all" else f"{prefix}e{i}-{k}"
        t0, token = now - 600, "%064x" % (i + 1)
        if i % 2 == 0:
            start = {"attributes_type": "LiveActivityAttributes", "app": "com.example.rides",
                     "attributes": {"driverName": "Ana", "rating": "4.9"},
                     "content_state": {"driverName": "Ana", "rating": "4.9", "progress": 0, "duration": 12},
                     "stale_date": t0 + 4 * 3600}
        else:
            start = {"attributes_type": "TimerWidgetAttributes", "app": "com.example.timer",
                     "attributes": {"startedAt": int(t0)}, "content_state": {"elapsed": 0, "paused": False}}
        out.append(json.dumps(dict(start, id=eid(0), type="activity.started", activity_id=aid, booking_id=bk,
                                   occurred_at=t0, relevance_score=(i % 100) / 100, push_token=token)))
        for k in range(1, 10):
            t = t0 + k * 60
            content = ({"driverName": "Ana", "rating": "4.9", "progress": k / 10, "duration": 12 - k} if i % 2 == 0
                       else {"elapsed": k * 60, "paused": False})
            out.append(json.dumps({"id": eid(k), "type": "push.sent", "activity_id": aid, "occurred_at": t,
                                   "event": "update", "priority": 5 if k % 4 == 0 else 10, "status": 200,
                                   "latency_ms": 20 + (i + k) % 60 + 0.5, "push_token": token, "timestamp": t,
                                   "payload_bytes": 212, "content_state": content}))
    return out


def writer_cpu(pid):
    return sum(cpu for name, cpu in threads(pid).values() if "writ" in name)


def run(kind, r):
    port = free_port()
    p = subprocess.Popen([binary, "serve", "--db", db, "--port", str(port)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(p, port, binary)
        now = time.time()
        all_lines = lines(kind, f"x{int(now * 1000)}-", now)
        bodies = ["\n".join(all_lines[k:k + 500]) for k in range(0, len(all_lines), 500)]
        recorder = None
        if perf:
            recorder = subprocess.Popen(["perf", "record", "-F", "2000", "-g", "-p", str(p.pid), "-o",
                                         f"{perf}-{kind}-{r}.data"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        before, t0 = writer_cpu(p.pid), time.monotonic()
        post_ndjson(port, bodies, clients=4)
        wall = time.monotonic() - t0
        cpu = (writer_cpu(p.pid) - before) / len(all_lines) * 1e6
        if recorder: recorder.send_signal(signal.SIGINT); recorder.wait()
        return len(all_lines) / wall, cpu
    finally:
        p.send_signal(signal.SIGINT); p.wait()


res = {k: [] for k in KINDS}
for r in range(rounds):
    for kind in (KINDS if r % 2 == 0 else tuple(reversed(KINDS))):
        rate, cpu = run(kind, r + 1)
        res[kind].append((rate, cpu))
        print(f"round {r + 1} {kind}: {rate:.0f} events/s, writer {cpu:.1f} µs an event", flush=True)
for kind in KINDS:
    print(f"median {kind}: {statistics.median(x[0] for x in res[kind]):.0f} events/s, "
          f"writer {statistics.median(x[1] for x in res[kind]):.1f} µs an event")
