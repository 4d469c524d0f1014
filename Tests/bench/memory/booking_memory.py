"""Tests/bench/memory/booking_memory.py — one large booking (ACTIVITIES × PUSHES events) read
through /api/bookings/{id}: answer size, time and the server's resident memory.
usage: python3 Tests/bench/memory/booking_memory.py .build/release/live-activity-monitor ACTIVITIES PUSHES PARALLEL"""
import json, re, shutil, subprocess, sys, tempfile, threading, time, http.client

bin_, activities, pushes, parallel = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
d = tempfile.mkdtemp()
p = subprocess.Popen([bin_, "serve", "--port", "0", "--db", d + "/m.sqlite"], stderr=subprocess.PIPE, text=True)
for line in p.stderr:
    m = re.search(r"listening on http://[^ ]*:(\d+)", line)
    if m: port = int(m.group(1)); break
def status(field):
    with open(f"/proc/{p.pid}/status") as f:
        for line in f:
            if line.startswith(field): return int(line.split()[1]) // 1024
def post(events):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", "/v1/events", ("\n".join(map(json.dumps, events)) + "\n").encode(), {"Content-Type": "application/x-ndjson"})
    assert c.getresponse().status == 200
    c.close()
t0 = time.time() - 7200
token = "0123456789abcdef" * 4
for a in range(activities):
    events = [{"type": "activity.started", "activity_id": f"a{a}", "booking_id": "BK-BIG", "attributes_type": "RideAttributes",
               "occurred_at": t0 + a, "push_token": token, "content_state": {"driverName": "Ana", "progress": 0}}]
    events += [{"type": "push.sent", "activity_id": f"a{a}", "event": "update", "status": 200, "latency_ms": 20, "priority": 5,
                "push_token": token, "occurred_at": t0 + a + i + 1, "content_state": {"driverName": "Ana", "progress": i}}
               for i in range(pushes)]
    for k in range(0, len(events), 1000): post(events[k:k + 1000])
time.sleep(1)
before = status("VmRSS")
sizes, times = [], []
def read():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    s = time.time(); c.request("GET", "/api/bookings/BK-BIG"); r = c.getresponse(); body = r.read()
    times.append(time.time() - s); sizes.append((r.status, len(body))); c.close()
ts = [threading.Thread(target=read) for _ in range(parallel)]
for t in ts: t.start()
for t in ts: t.join()
print(f"events={activities * (pushes + 1)} parallel={parallel} answers={sizes[:2]} seconds_max={max(times):.2f} "
      f"rss_before_mb={before} peak_rss_mb={status('VmHWM')}")
p.terminate(); p.wait(); shutil.rmtree(d, ignore_errors=True)
