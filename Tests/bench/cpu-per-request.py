#!/usr/bin/env python3
"""CPU per request of the HTTP layers, a fixed 200: our HTTPServer (`http-baseline`) and
libmicrohttpd alone (`library-baseline`), started from one or more bench binaries in turn, each
under wrk (2 threads, 64 connections) for SECONDS, with keep-alive and with `Connection: close`.
Prints, per round, the server's utime+stime per request for each binary and case, then the
medians and the ratio library/ours (1.0: our layer costs what the library does). The machine is
shared: the rounds alternate the binaries, and the ratios are taken within a round.

usage: cpu-per-request.py SECONDS ROUNDS BIN [BIN ...]
"""
import os, re, statistics, subprocess, sys, time

TICK = os.sysconf("SC_CLK_TCK")


def cpu(pid):
    f = open(f"/proc/{pid}/stat").read()
    f = f[f.rindex(")") + 2:].split()
    return (int(f[11]) + int(f[12])) / TICK


def measure(binary, mode, seconds, close):
    srv = subprocess.Popen([binary, mode], stderr=subprocess.PIPE, text=True)
    try:
        line = srv.stderr.readline()
        port = re.search(r":(\d+)\s*$", line).group(1)
        wrk = ["wrk", "-t2", "-c64", f"-d{seconds}s", "--latency"]
        if close:
            wrk += ["-H", "Connection: close"]
        subprocess.run(wrk + [f"http://127.0.0.1:{port}/"], capture_output=True, timeout=seconds + 30)  # warm-up
        before = cpu(srv.pid)
        out = subprocess.run(wrk + [f"http://127.0.0.1:{port}/"], capture_output=True, text=True,
                             timeout=seconds + 30).stdout
        used = cpu(srv.pid) - before
        requests = int(re.search(r"(\d+) requests in", out).group(1))
        return used / requests * 1e6
    finally:
        srv.terminate()
        srv.wait(timeout=30)


def main():
    seconds, rounds, binaries = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    cases = [("keep-alive", False), ("close", True)]
    ratios = {(b, c): [] for b in binaries for c, _ in cases}
    for r in range(rounds):
        for name, close in cases:
            for b in binaries:
                lib = measure(b, "library-baseline", seconds, close)
                ours = measure(b, "http-baseline", seconds, close)
                ratios[(b, name)].append(lib / ours)
                print(f"round {r + 1} {name:10} {b}: ours {ours:.1f} µs, library {lib:.1f} µs, ratio {lib / ours:.2f}",
                      flush=True)
    for (b, name), values in ratios.items():
        print(f"median {name:10} {b}: {statistics.median(values):.2f} ({' '.join(f'{v:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
