#!/usr/bin/env python3
"""startup-ab.py DB ROUNDS BIN... : start each server's `serve` on DB in turn (the order
alternating per round), time launch -> GET /-/ready 200, and read at that moment its CPU
(utime+stime), VmRSS and VmHWM (/proc/PID/status) and the 1-minute load average; print each
round, then per binary the medians and, against the first binary, the medians of the
per-round ratios. A server writes to DB as it opens it: give it a copy."""
import os, signal, statistics, subprocess, sys, time
from proctools import free_port, wait_ready

db, rounds, bins = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
tck = os.sysconf("SC_CLK_TCK")
fields = ("wall", "cpu", "rss", "hwm", "load")


def status_mb(pid, key):
    return [int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith(key)][0] / 1024


def start_up(binary):
    port = free_port()
    t0 = time.monotonic()
    p = subprocess.Popen([binary, "serve", "--db", db, "--port", str(port)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_ready(p, port, binary)
    wall = time.monotonic() - t0
    st = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
    cpu = (int(st[11]) + int(st[12])) / tck
    row = dict(wall=wall, cpu=cpu, rss=status_mb(p.pid, "VmRSS"), hwm=status_mb(p.pid, "VmHWM"),
               load=os.getloadavg()[0])
    p.send_signal(signal.SIGINT); p.wait()
    return row


res = {b: [] for b in bins}
for r in range(rounds):
    for b in (bins if r % 2 == 0 else list(reversed(bins))):
        row = start_up(b)
        res[b].append(row)
        print(f"round {r + 1} {os.path.basename(b)}: wall {row['wall']:.2f} s cpu {row['cpu']:.2f} s "
              f"rss {row['rss']:.0f} MB hwm {row['hwm']:.0f} MB (load {row['load']:.1f})", flush=True)
for b in bins:
    m = {f: statistics.median(x[f] for x in res[b]) for f in fields}
    line = (f"median {os.path.basename(b)}: wall {m['wall']:.2f} s cpu {m['cpu']:.2f} s rss {m['rss']:.0f} MB "
            f"hwm {m['hwm']:.0f} MB (load {m['load']:.1f})")
    if b != bins[0]:
        ratio = {f: statistics.median(x[f] / y[f] for x, y in zip(res[b], res[bins[0]])) for f in fields[:4]}
        line += " | ratio to " + os.path.basename(bins[0]) + ": " + " ".join(f"{f} {ratio[f]:.3f}" for f in fields[:4])
    print(line)
