#!/usr/bin/env python3
"""sqlite-ids.py PRELOAD N IDS [--page-size BYTES] [--cache-mib MIB] [--rows] [--by-number]
[--bucketed-keys] [--bucket-bits BITS] [--without INDEX ...]: SQLite alone (Python's sqlite3, over
Debian's libsqlite3 as the server) storing events in the monitor's events table, its three indexes
and `activity_events`, with the writer's settings (WAL, synchronous=NORMAL, 8 MiB cache unless
--cache-mib, checkpoints every 4,000 pages): PRELOAD events stored first, then N more timed in
commits of 1,000 (activities of a start and 9 pushes). IDS: `numbered` (each new id beside the
last), `v7` (random activity and booking ids, time-ordered event ids) or `random` (all random).
--rows adds each activity's row (`activities`: its id's key and `activities_by_booking`), written
in the commit of its start; --by-number (with --rows) files events under the row's number, given
in start order, as migration 16 does, not under the activity id (PERFORMANCE.md, session 33).
--without drops `events_by_event_id`, `events_by_booking` or `activity_events`, or (with
--by-number) `activity_keys`: the activities table keyed by its number alone, without the two
indexes a lookup by id needs (the key on `activity_id`, `activities_by_booking`), the events
filed through a table of the commit's own starts: the upper bound of keeping those indexes out
of the big file. --bucketed-keys keeps both indexes, led by the number's bucket of 2^17
(`number >> 17`; --bucket-bits BITS: of 2^BITS activities), so that new entries go to the newest
bucket (a lookup by id would probe each bucket). --without, --bucketed-keys and --cache-mib are
session 37's, --bucket-bits session 38's. Prints µs an event (wall, CPU), KiB written an event
(`wchar`: the log, and the checkpoints' copies) and the file's size, then (with rows keyed by
id) the µs of a lookup of an activity's number by its id, found and not found.
A new file in the current directory, removed at the end (PERFORMANCE.md, session 31)."""
import os, sqlite3, sys, time, uuid

flags = {"--rows", "--by-number", "--bucketed-keys"}
bucketed = "--bucketed-keys" in sys.argv or "--bucket-bits" in sys.argv
rows_too, by_number = "--rows" in sys.argv or "--by-number" in sys.argv or bucketed, "--by-number" in sys.argv or bucketed
args = [a for a in sys.argv[1:] if a not in flags]
page, cache_mib, without, bucket_bits = 4096, 8, set(), 17
if "--page-size" in args:
    i = args.index("--page-size"); page = int(args[i + 1]); del args[i:i + 2]
if "--cache-mib" in args:
    i = args.index("--cache-mib"); cache_mib = int(args[i + 1]); del args[i:i + 2]
if "--bucket-bits" in args:
    i = args.index("--bucket-bits"); bucket_bits = int(args[i + 1]); del args[i:i + 2]
if "--without" in args:
    i = args.index("--without"); without = set(args[i + 1:]); del args[i:]
preload, n, ids = int(args[0]), int(args[1]), args[2]
assert ids in ("numbered", "v7", "random"), "IDS: numbered, v7 or random"
path = f"sqlite-ids-{os.getpid()}.sqlite"
db = sqlite3.connect(path, isolation_level=None)
for pragma in (f"page_size={page}", "journal_mode=WAL", "synchronous=NORMAL", f"cache_size=-{cache_mib * 1024}",
               "wal_autocheckpoint=4000"):
    db.execute("PRAGMA " + pragma)
db.execute("""CREATE TABLE events (seq INTEGER PRIMARY KEY, event_id TEXT, type TEXT NOT NULL, activity_id TEXT,
              booking_id TEXT, occurred_at REAL NOT NULL, received_at REAL NOT NULL, body TEXT NOT NULL)""")
if "events_by_event_id" not in without:
    db.execute("CREATE UNIQUE INDEX events_by_event_id ON events(event_id) WHERE event_id IS NOT NULL")
db.execute("CREATE INDEX events_by_occurred_at ON events(occurred_at)")
if "events_by_booking" not in without:
    db.execute("CREATE INDEX events_by_booking ON events(booking_id, occurred_at, seq) WHERE booking_id IS NOT NULL")
if "activity_events" not in without:
    db.execute(f"""CREATE TABLE activity_events ({"number INTEGER" if by_number else "activity_id TEXT"} NOT NULL,
                   seq INTEGER NOT NULL, PRIMARY KEY ({"number" if by_number else "activity_id"}, seq)) WITHOUT ROWID""")
keyed_by_number = "activity_keys" in without or bucketed
assert not keyed_by_number or by_number, "--without activity_keys files by number"
if rows_too and keyed_by_number:
    db.execute("CREATE TABLE activities (activity_id TEXT, booking_id TEXT, number INTEGER PRIMARY KEY, row TEXT)")
    db.execute("CREATE TEMP TABLE commit_starts (activity_id TEXT PRIMARY KEY, number INTEGER)")
    if bucketed:
        db.execute(f"CREATE INDEX activities_by_id ON activities(number >> {bucket_bits}, activity_id)")
        db.execute(f"CREATE INDEX activities_by_booking ON activities(number >> {bucket_bits}, booking_id)")
elif rows_too:
    db.execute("CREATE TABLE activities (activity_id TEXT PRIMARY KEY, booking_id TEXT, number INTEGER, row TEXT)")
    db.execute("CREATE INDEX activities_by_booking ON activities(booking_id)")
body = "x" * 550   # about a push.sent's stored body
made = 0
numbered = 0


def rows(count, t):
    global made
    out = []
    for _ in range(count // 10):
        made += 1
        aid = uuid.uuid4().hex if ids != "numbered" else f"a{made:012d}"
        bk = uuid.uuid4().hex[:12] if ids != "numbered" else f"b{made:012d}"
        for k in range(10):
            eid = uuid.uuid4().hex if ids == "random" else f"e{made:012d}-{k}" + ("" if ids == "numbered" else uuid.uuid4().hex[:20])
            out.append((eid, "push.sent" if k else "activity.started", aid, None if k else bk, t + k, t + k, body))
    return out


def store(batch):
    global numbered
    for i in range(0, len(batch), 1000):
        db.execute("BEGIN")
        before = db.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0]
        db.executemany("""INSERT INTO events (event_id, type, activity_id, booking_id, occurred_at, received_at, body)
                          VALUES (?, ?, ?, ?, ?, ?, ?)""", batch[i:i + 1000])
        if rows_too:
            starts = [(r[2], r[3], numbered + k + 1, r[6][:300]) for k, r in enumerate(r for r in batch[i:i + 1000] if r[3])]
            numbered += len(starts)
            db.executemany("INSERT INTO activities VALUES (?, ?, ?, ?)", starts)
            if keyed_by_number:
                db.execute("DELETE FROM commit_starts")
                db.executemany("INSERT INTO commit_starts VALUES (?, ?)", [(a, n) for a, _, n, _ in starts])
        if "activity_events" not in without and keyed_by_number:
            db.execute("""INSERT INTO activity_events SELECT a.number, e.seq FROM events e JOIN commit_starts a USING (activity_id)
                          WHERE e.seq > ? ORDER BY 1, 2""", (before,))
        elif "activity_events" not in without and by_number:
            db.execute("""INSERT INTO activity_events SELECT a.number, e.seq FROM events e JOIN activities a USING (activity_id)
                          WHERE e.seq > ? ORDER BY 1, 2""", (before,))
        elif "activity_events" not in without:
            db.execute("""INSERT INTO activity_events SELECT activity_id, seq FROM events WHERE seq > ?
                          ORDER BY activity_id, seq""", (before,))
        db.execute("COMMIT")


def lookups():
    """µs a lookup of an activity's number by its id, found and not found: one probe of the key,
    or (bucketed) one probe of each bucket, newest first, in one statement."""
    if bucketed:
        top = db.execute("SELECT max(number) FROM activities").fetchone()[0] >> bucket_bits
        query = f"""WITH RECURSIVE bucket(k) AS (SELECT {top} UNION ALL SELECT k - 1 FROM bucket WHERE k > 0)
                    SELECT a.number FROM bucket JOIN activities a
                    ON (a.number >> {bucket_bits}) = bucket.k AND a.activity_id = ? LIMIT 1"""
    else:
        query = "SELECT number FROM activities WHERE activity_id = ?"
    found = [r for r in db.execute("SELECT activity_id FROM activities ORDER BY random() LIMIT 2000")]
    for label, keys in (("found", found), ("not found", [(uuid.uuid4().hex,) for _ in range(2000)])):
        start = time.monotonic()
        hits = sum(db.execute(query, k).fetchone() is not None for k in keys)
        assert hits == (len(keys) if label == "found" else 0)
        print(f"  lookup by id, {label}: {(time.monotonic() - start) / len(keys) * 1e6:.1f} µs")


def written():
    return [int(l.split()[1]) for l in open("/proc/self/io") if l.startswith("wchar")][0]


try:
    t = time.time()
    for k in range(0, preload, 100_000):
        store(rows(min(100_000, preload - k), t))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    batch = rows(n, t + 1000)
    io, cpu, wall = written(), time.process_time(), time.monotonic()
    store(batch)
    wall, cpu, io = time.monotonic() - wall, time.process_time() - cpu, written() - io
    print(f"ids {ids}, page {page}, cache {cache_mib} MiB, rows {rows_too}, filed by {'number' if by_number else 'id'}, "
          f"without {sorted(without) or 'none'}{f', keys bucketed by 2^{bucket_bits}' if bucketed else ''}, {preload} stored: "
          f"{wall / n * 1e6:.1f} µs an event (CPU {cpu / n * 1e6:.1f}), {io / n / 1024:.1f} KiB written an event, "
          f"file {db.execute('PRAGMA page_count').fetchone()[0] * page / 1e6:.0f} MB")
    if rows_too and "activity_keys" not in without:
        lookups()
finally:
    db.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix): os.remove(path + suffix)
