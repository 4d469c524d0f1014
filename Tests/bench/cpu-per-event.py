#!/usr/bin/env python3
"""CPU per single event, by thread: start `serve` (BIN: a live-activity-monitor or bench binary) on
a fresh file, start 1,000 activities, run wrk single-event.lua (2 threads, 64 connections) for
SECONDS after a 1-second warm-up, and print the server's utime+stime per acknowledged event, whole
and per thread name, as one JSON line (PERFORMANCE.md, "Eleventh pass"). Alternate two builds
in one sitting and compare medians: the machine is shared.

usage: cpu-per-event.py BIN SECONDS [--unstarted] [--close] [--batch N] [--perf OUT] [--warm S]
  --unstarted  push to activities never started; --close  `Connection: close` on every request;
  --batch N  N events per request as NDJSON (ndjson-batch.lua) instead of one;
  --perf OUT  perf record -g the server meanwhile
"""
import json, os, socket, subprocess, sys, tempfile, time, urllib.request, glob, re
from proctools import free_port, threads

HERE = os.path.dirname(os.path.abspath(__file__))
TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    f = open(f"/proc/{pid}/stat").read()
    f = f[f.rindex(")") + 2:].split()
    return (int(f[11]) + int(f[12])) / TICK


def post(port, body, ctype="application/x-ndjson"):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/events", data=body.encode(),
                                 headers={"Content-Type": ctype})
    return urllib.request.urlopen(req, timeout=30).read()


def main():
    binary, seconds = sys.argv[1], float(sys.argv[2])
    unstarted = "--unstarted" in sys.argv
    close = ["close"] if "--close" in sys.argv else []
    perf = sys.argv[sys.argv.index("--perf") + 1] if "--perf" in sys.argv else None
    warm = float(sys.argv[sys.argv.index("--warm") + 1]) if "--warm" in sys.argv else 1.0
    batch = int(sys.argv[sys.argv.index("--batch") + 1]) if "--batch" in sys.argv else 0
    script, extra = (os.path.join(HERE, "ndjson-batch.lua"), [str(batch)]) if batch else (os.path.join(HERE, "single-event.lua"), close)
    d = tempfile.mkdtemp(prefix="cpuper-")
    os.mkdir(d + "/no-web")
    port = free_port()
    srv = subprocess.Popen([binary, "serve", "--port", str(port), "--db", d + "/x.sqlite", "--web-root", d + "/no-web"],
                           stdout=open(d + "/log", "w"), stderr=subprocess.STDOUT)
    try:
        for _ in range(300):
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=1).status == 200:
                    break
            except Exception:
                time.sleep(0.05)
        now = time.time()
        n = 1000
        lines = []
        for i in range(n):
            t = now - 3600
            lines.append(json.dumps({"id": f"s{i}", "type": "activity.started", "activity_id": f"a{i}",
                                     "booking_id": f"b{i}", "attributes_type": "LiveActivityAttributes",
                                     "occurred_at": t, "app": "com.example.rides",
                                     "attributes": {"driverName": "Ana", "rating": "4.9"},
                                     "content_state": {"driverName": "Ana", "rating": "4.9", "progress": 0, "duration": 12},
                                     "stale_date": t + 4 * 3600, "relevance_score": (i % 100) / 100,
                                     "push_token": "%064x" % (i + 1)}, separators=(",", ":")))
        post(port, "\n".join(lines))
        prefix = "wn" if unstarted else "a"
        base = int(now - 60)

        def wrk(secs, run):
            r = subprocess.run(["wrk", "-t2", "-c8" if batch else "-c64", f"-d{int(secs)}s", "-s", script, f"http://127.0.0.1:{port}",
                                "--", run, prefix, str(n), str(base), *extra], capture_output=True, text=True)
            m = re.search(r"(\d+) requests in", r.stdout)
            bad = re.search(r"Non-2xx or 3xx responses: (\d+)", r.stdout)
            if bad:
                raise SystemExit("non-2xx: " + r.stdout + open(d + "/log").read()[-2000:])
            return int(m.group(1)) * max(batch, 1)

        if warm > 0:
            wrk(warm, "warm")
        time.sleep(0.3)
        before, tb = proc_cpu(srv.pid), threads(srv.pid)
        pp = None
        if perf:
            pp = subprocess.Popen(["perf", "record", "-g", "-F", "999", "-p", str(srv.pid), "-o", perf],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.3)
        up = open("/proc/loadavg").read().split()[0]
        reqs = wrk(seconds, "m")
        if pp:
            pp.send_signal(2); pp.wait()
        time.sleep(0.3)
        after, ta = proc_cpu(srv.pid), threads(srv.pid)
        by = {}
        for k, (name, c) in ta.items():
            by[name] = by.get(name, 0) + c - tb.get(k, (name, 0))[1]
        res = {"bin": binary, "events": reqs, "rate": reqs / seconds, "cpu_us": (after - before) / reqs * 1e6,
               "load": up, "threads": {k: round(v / reqs * 1e6, 2) for k, v in sorted(by.items(), key=lambda x: -x[1]) if v > 0}}
        print(json.dumps(res))
    finally:
        srv.terminate(); srv.wait()
        subprocess.run(["rm", "-rf", d])


main()
