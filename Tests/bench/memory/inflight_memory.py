"""Tests/bench/memory/inflight_memory.py — Peak resident memory of a release server while N clients post ~1 MiB NDJSON bodies at once.
usage: python3 Tests/bench/memory/inflight_memory.py .build/release/live-activity-monitor CLIENTS ROUNDS [extra serve args...]"""
import json, re, os, socket, subprocess, sys, tempfile, threading, time, http.client

bin_, clients, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
extra = sys.argv[4:]
d = tempfile.mkdtemp()
port = 0
p = subprocess.Popen([bin_, "serve", "--port", "0", "--db", d + "/m.sqlite", "--max-connections", "1000"] + extra,
                     stderr=subprocess.PIPE, text=True)
for line in p.stderr:
    if "listening on" in line:
        import re; port = int(re.search(r"listening on http://[^ ]*:(\d+)", line).group(1))
        break
def body(k):
    lines = []
    n = 0
    while sum(map(len, lines)) < 1_000_000 and len(lines) < 1000:
        lines.append(json.dumps({"type": "push.sent", "activity_id": f"a{k}-{n}", "event": "update", "status": 200,
            "latency_ms": 12, "push_token": "0123456789abcdef" * 4, "occurred_at": 1795000000,
            "content_state": {"pad": "x" * 900, "n": n}}))
        n += 1
    return ("\n".join(lines) + "\n").encode()
bodies = [body(k) for k in range(clients)]
codes = {}
lock = threading.Lock()
def client(k):
    for r in range(rounds):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            c.request("POST", "/v1/events", bodies[k], {"Content-Type": "application/x-ndjson"})
            status = c.getresponse().status
        except OSError:
            status = "closed before the body was sent (a 503 from the headers)"

        with lock: codes[status] = codes.get(status, 0) + 1
        c.close()
peak = 0
def hwm():
    with open(f"/proc/{p.pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM"): return int(line.split()[1]) // 1024
ts = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
t0 = time.time()
for t in ts: t.start()
for t in ts: t.join()
print(f"clients={clients} rounds={rounds} body={len(bodies[0])} args={extra} codes={codes} peak_rss_mb={hwm()} seconds={time.time()-t0:.1f}")
p.terminate(); p.wait()
import shutil; shutil.rmtree(d, ignore_errors=True)
