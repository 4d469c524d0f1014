"""Start-up on a large database is fast because state comes from the current-state table
(`activities`) and `counters`, never from replaying the event log.

The database is made realistic and quickly: 20 activities (rides and timers: live, ended, long
dismissed; token rotations, APNs 200/429/410, updates) go through the real `import` command, so
the schema, the migrations and the rows are the server's own; then SQL copies them (new ids) in
large transactions up to the target size.

Always: 50,000 events / 2,500 activities. The check that start-up does not scan the events
table is on bytes, not time: the bytes the process reads (/proc/PID/io rchar, which counts every
read() including those served from the page cache) on that database and on the same database
with its event log emptied must differ by far less than the log's size.
LAM_BENCH=1 (or LAM_SOAK=1): 1,000,000 events / 50,000 activities as well, and prints the time.
"""

import json
import os
import shutil
import sqlite3
import tempfile
import time

from reliability_support import Server, check, log, main, parse_metrics, run, total

FULL = os.environ.get("LAM_BENCH") == "1" or os.environ.get("LAM_SOAK") == "1"
TEMPLATE_ACTIVITIES = 20
EVENTS_PER_ACTIVITY = 20


def template_events(now):
    """20 activities × 20 events: 4 live rides, 2 ended (still on screen), 14 long dismissed."""
    out = []
    for a in range(TEMPLATE_ACTIVITIES):
        ride = a % 2 == 0
        activity = f"{'ride' if ride else 'timer'}-{a:03d}"
        kind = "live" if a < 4 else "ended" if a < 6 else "dismissed"
        t = now - {"live": 600, "ended": 3600, "dismissed": 3 * 86400}[kind]
        token = f"{a:02x}" * 32
        def content(i):
            return {"driverName": "Ana", "rating": "4.9", "progress": i / 20, "duration": 20 - i} if ride \
                else {"startedAt": t}
        events = [{"type": "activity.started", "activity_id": activity, "booking_id": f"BK-{a:05d}",
                   "attributes_type": "LiveActivityAttributes" if ride else "TimerWidgetAttributes",
                   "app": "com.example.rides" if ride else "com.example.timer", "occurred_at": t,
                   "content_state": content(0), "push_token": token, "stale_date": t + 7200,
                   "attributes": {"name": "Ride" if ride else "Timer"}}]
        token = f"{a + 100:02x}" * 32
        events.append({"type": "activity.token_updated", "activity_id": activity, "occurred_at": t + 5, "push_token": token})
        i = 1
        while len(events) < EVENTS_PER_ACTIVITY - (2 if kind != "live" else 0):
            at = t + 10 + i * 20
            if i % 3 == 0:
                events.append({"type": "activity.updated", "activity_id": activity, "occurred_at": at,
                               "content_state": content(i)})
            else:
                status = 429 if i % 7 == 0 else 200
                events.append({"type": "push.sent", "activity_id": activity, "occurred_at": at, "event": "update",
                               "status": status, "reason": "TooManyRequests" if status == 429 else None,
                               "latency_ms": 20 + i * 3.5, "push_token": token, "priority": 10 if i % 2 else 5,
                               "apns_id": f"{a:08x}-0000-4000-8000-{i:012x}", "payload_bytes": 300 + i,
                               "content_state": content(i)})
            i += 1
        if kind != "live":
            end = t + 10 + i * 20
            events.append({"type": "push.sent", "activity_id": activity, "occurred_at": end, "event": "end",
                           "status": 200, "latency_ms": 31.0, "push_token": token, "content_state": content(i)})
            events.append({"type": "activity.ended", "activity_id": activity, "occurred_at": end + 1,
                           "dismissal_policy": "default"})
        for n, e in enumerate(events):
            e["id"] = f"{activity}-e{n}"
            if e.get("reason") is None:
                e.pop("reason", None)
        out += events
    return out


def build(db, events_target):
    """The template through `import`, then copies of its rows up to events_target events."""
    ndjson = db + ".ndjson"
    with open(ndjson, "w") as f:
        for e in template_events(time.time()):
            f.write(json.dumps(e) + "\n")
    r = run(["import", ndjson, "--db", db])
    check(r.returncode == 0, f"import failed: {r.stderr}")
    os.remove(ndjson)
    copies = events_target // (TEMPLATE_ACTIVITIES * EVENTS_PER_ACTIVITY)
    c = sqlite3.connect(db, isolation_level=None)
    try:
        columns = [row[1] for row in c.execute("PRAGMA table_info(activities)")]
        # A copy's `held_record` would still name the original's id: left out, the copies are
        # read from their columns, as any row written by SQL from outside the server.
        renamed = {"activity_id": "activity_id || '-c' || n.i", "booking_id": "booking_id || '-c' || n.i",
                   "held_record": "NULL"}
        c.execute("BEGIN")
        c.execute("CREATE TEMP TABLE n(i INTEGER PRIMARY KEY)")
        c.executemany("INSERT INTO n VALUES (?)", [(i,) for i in range(1, copies)])
        c.execute(f"""INSERT INTO activities ({', '.join(columns)})
                      SELECT {', '.join(renamed.get(col, col) for col in columns)} FROM n, activities a
                      WHERE a.activity_id NOT LIKE '%-c%' ORDER BY n.i""")
        # An inherited booking is in the body only (the column holds bookings the client gave).
        c.execute("""INSERT INTO events (event_id, type, activity_id, booking_id, occurred_at, received_at, body)
                     SELECT event_id || '-c' || n.i, type, activity_id || '-c' || n.i, booking_id || '-c' || n.i,
                            occurred_at, received_at,
                            replace(replace(replace(body, '"' || event_id || '"', '"' || event_id || '-c' || n.i || '"'),
                                            '"' || activity_id || '"', '"' || activity_id || '-c' || n.i || '"'),
                                    '"' || e.booking || '"', '"' || e.booking || '-c' || n.i || '"')
                     FROM n, (SELECT *, json_extract(body, '$.booking_id') AS booking FROM events) e
                     WHERE e.event_id NOT LIKE '%-c%' ORDER BY n.i, e.seq""")
        # The copied rows above already include the copied events: nothing for start-up to replay.
        # Filed under their activities as the server files what it applied.
        c.execute("""INSERT INTO activity_events (activity_id, seq)
                     SELECT activity_id, seq FROM events
                     WHERE seq > (SELECT applied_seq FROM store_state) AND activity_id IS NOT NULL""")
        c.execute("UPDATE store_state SET applied_seq = (SELECT max(seq) FROM events)")
        c.execute("COMMIT")
        events = c.execute("SELECT count(*) FROM events").fetchone()[0]
        activities = c.execute("SELECT count(*) FROM activities").fetchone()[0]
        live = c.execute("SELECT count(*) FROM activities WHERE dismissed_at IS NULL").fetchone()[0]
    finally:
        c.close()
    return events, activities, live


def start(db):
    """(seconds until /-/ready answered 200, bytes the process read, /metrics text)."""
    server = Server(db, wait_ready=False)
    try:
        seconds = server.wait_ready()
        with open(f"/proc/{server.process.pid}/io") as f:
            rchar = int(next(line for line in f if line.startswith("rchar:")).split()[1])
        status, _, metrics = server.request("GET", "/metrics")
        check(status == 200, "no /metrics")
    finally:
        check(server.stop() == 0, "unclean stop")
    return seconds, rchar, metrics


def startup(events_target):
    directory = tempfile.mkdtemp(prefix="lam-startup-")
    try:
        db = os.path.join(directory, "big.sqlite")
        t = time.monotonic()
        events, activities, live = build(db, events_target)
        built = time.monotonic() - t
        check(events == events_target, f"built {events} events, wanted {events_target}")
        seconds, rchar, metrics = start(db)
        # The same database with an empty log: start-up must read (almost) the same bytes.
        empty = os.path.join(directory, "empty-log.sqlite")
        shutil.copy(db, empty)
        c = sqlite3.connect(empty, isolation_level=None)
        c.execute("DELETE FROM events")
        c.execute("VACUUM")
        c.close()
        log_bytes = os.path.getsize(db) - os.path.getsize(empty)
        seconds_empty, rchar_empty, _ = start(empty)
        check(rchar - rchar_empty < log_bytes / 20,
              f"start-up read {rchar} bytes with the log and {rchar_empty} without: it reads the "
              f"{log_bytes}-byte event log")
        on_screen = total(parse_metrics(metrics), "liveactivity_activities")
        check(on_screen == live, f"liveactivity_activities sums to {on_screen}, but {live} activities are not dismissed")
        log(f"startup: {events:,} events, {activities:,} activities ({live:,} not dismissed, loaded into memory), "
            f"{os.path.getsize(db) / 1e6:.0f} MB built in {built:.1f} s; start until /-/ready 200: {seconds:.2f} s "
            f"({seconds_empty:.2f} s with the log emptied); bytes read: {rchar:,} vs {rchar_empty:,} "
            f"(event log {log_bytes:,} bytes)")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    tests = [("startup_50k_events_does_not_read_the_log", lambda: startup(50_000))]
    if FULL:
        tests.append(("startup_1m_events_50k_activities", lambda: startup(1_000_000)))
    main(tests)
