"""Tests/bench/memory/live_memory.py — Resident memory per live activity: N activities with content and attributes of SIZE bytes each."""
import json, re, subprocess, sys, tempfile, time, http.client
bin_, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = tempfile.mkdtemp()
p = subprocess.Popen([bin_, "serve", "--port", "0", "--db", d + "/m.sqlite"], stderr=subprocess.PIPE, text=True)
for line in p.stderr:
    m = re.search(r"listening on http://[^ ]*:(\d+)", line)
    if m: port = int(m.group(1)); break
def rss():
    with open(f"/proc/{p.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"): return int(line.split()[1])
time.sleep(0.5)
before = rss()
now = time.time()
pad = "x" * max(0, size - 40)
step = 500 if size < 1000 else 100
for start in range(0, n, step):
    evs = [json.dumps({"type": "activity.started", "activity_id": f"m-{i}", "booking_id": f"BK-{i}", "attributes_type": "RideAttributes",
                       "occurred_at": now, "content_state": {"pad": pad, "i": i}, "attributes": {"pad": pad, "i": i}})
           for i in range(start, min(n, start + step))]
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("POST", "/v1/events", ("\n".join(evs) + "\n").encode(), {"Content-Type": "application/x-ndjson"})
    assert c.getresponse().status == 200
    c.close()
time.sleep(1.0)
after = rss()
print(f"n={n} size={size} idle_kb={before} after_kb={after} per_activity_bytes={(after - before) * 1024 / n:.0f}")
p.terminate(); p.wait()
import shutil; shutil.rmtree(d, ignore_errors=True)
