"""What the bench's Python tools share: a free port, and a process's CPU time per thread."""
import glob, http.client, os, re, socket, sys, threading, time, urllib.request

TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def threads(pid):
    """{task directory: (thread name less a trailing number, utime+stime in seconds)}."""
    out = {}
    for d in glob.glob(f"/proc/{pid}/task/*"):
        try:
            st = open(d + "/stat").read()
        except OSError:
            continue
        name = st[st.index("(") + 1:st.rindex(")")]
        f = st[st.rindex(")") + 2:].split()
        out[d] = (re.sub(r"[-_]?\d+$", "", name), (int(f[11]) + int(f[12])) / TICK)
    return out


def wait_ready(process, port, what="the server"):
    """Returns once `GET /-/ready` on `port` answers 200; exits if `process` ends first."""
    while True:
        if process.poll() is not None:
            sys.exit(f"{what} exited ({process.returncode}) before it was ready")
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=1).status == 200:
                return
        except Exception:
            pass
        time.sleep(0.01)


def post_ndjson(port, bodies, clients):
    """POSTs `bodies` to `/v1/events` as NDJSON from `clients` keep-alive connections at once,
    the bodies dealt among them in turn; each must be answered 200 or 202."""
    def client(part):
        c = http.client.HTTPConnection("127.0.0.1", port)
        for body in part:
            c.request("POST", "/v1/events", body, {"Content-Type": "application/x-ndjson"})
            resp = c.getresponse(); resp.read()
            assert resp.status in (200, 202), resp.status
    ts = [threading.Thread(target=client, args=(bodies[j::clients],)) for j in range(clients)]
    [t.start() for t in ts]; [t.join() for t in ts]
