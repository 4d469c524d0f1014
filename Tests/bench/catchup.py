#!/usr/bin/env python3
"""catchup.py BIN DB : start BIN serve on DB (give it a copy: the server writes to it), time launch ->
GET /-/ready 200, then every 2 s sample VmRSS/VmHWM and CPU (/proc) and time one GET /metrics, until
the CPU stays flat for 6 s (the catch-up of what time did while the server was down is over)."""
import os, signal, socket, subprocess, sys, time, urllib.request
b, db = sys.argv[1], sys.argv[2]
tck = os.sysconf("SC_CLK_TCK")
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
t0 = time.monotonic()
p = subprocess.Popen([b, "serve", "--db", db, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
def st():
    d = {l.split(':')[0]: int(l.split()[1]) // 1024 for l in open(f"/proc/{p.pid}/status") if l.startswith(("VmRSS","VmHWM"))}
    f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
    return d, (int(f[11]) + int(f[12])) / tck
while True:
    try:
        if urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=1).status == 200: break
    except Exception: pass
    time.sleep(0.01)
d, c = st(); print(f"ready {time.monotonic()-t0:.2f} s cpu {c:.1f} {d}", flush=True)
last = c; quiet = 0
while quiet < 3:
    time.sleep(2)
    t = time.monotonic()
    try:
        m = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read()
        sc = (time.monotonic() - t) * 1000
    except Exception as e: sc = -1
    d, c = st()
    print(f"{time.monotonic()-t0:6.1f} s cpu {c:6.1f} scrape {sc:6.1f} ms {d}", flush=True)
    quiet = quiet + 1 if c - last < 0.3 else 0
    last = c
p.send_signal(signal.SIGINT); p.wait()
print("total", time.monotonic() - t0)
