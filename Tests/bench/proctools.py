"""What the bench's Python tools share: a free port, and a process's CPU time per thread."""
import glob, os, re, socket

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
