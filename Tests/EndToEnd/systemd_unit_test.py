"""The systemd units in docs/systemd/ are valid, and the single-machine one starts the server as
it says.

- `systemd-analyze verify` accepts each with no complaint (an unknown key is only a warning on
  stderr: any output fails), with ExecStart pointing at the binary under test;
- its ExecStart's flags, with the credentials (`%d`) and the state directory in a temporary
  directory, start the real binary as an unprivileged user (the unit's DynamicUser): ready,
  ingest refused without the token and taken with it, the read API the same with its token,
  and a clean exit on SIGTERM (the unit's KillSignal);
- the replica unit (PostgreSQL) is hardened alike, names a `postgres://` database without a
  password and takes the password from a credential; its start over PostgreSQL, takeover and
  exit status are what the Swift tests `PostgresTakeoverTests` run with the real binary.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile

from reliability_support import BIN, NOBODY, ROOT, Server, check, main

UNIT = os.path.join(ROOT, "docs", "systemd", "live-activity-monitor.service")
REPLICA_UNIT = os.path.join(ROOT, "docs", "systemd", "live-activity-monitor-replica.service")
INSTALLED = "/usr/local/bin/live-activity-monitor"


def unit_text(unit=UNIT):
    with open(unit) as f:
        return f.read()


def exec_start(text):
    """The ExecStart command's words, continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", text)
    line = next(l for l in joined.splitlines() if l.startswith("ExecStart="))
    return shlex.split(line[len("ExecStart="):])


def verifies(unit=UNIT):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, os.path.basename(unit))
        with open(path, "w") as f:
            f.write(unit_text(unit).replace(INSTALLED, os.path.abspath(BIN)))
        result = subprocess.run(["systemd-analyze", "verify", path], capture_output=True, text=True, timeout=60)
        check(result.returncode == 0, f"systemd-analyze verify failed: {result.stderr}")
        check(result.stderr.strip() == "" and result.stdout.strip() == "",
              f"systemd-analyze verify complained: {result.stdout}{result.stderr}")
    text = unit_text(unit)
    for hardening in ["DynamicUser=yes", "ProtectSystem=strict", "Restart=on-failure", "NoNewPrivileges=yes",
                      "LoadCredential=ingest-token:", "LoadCredential=read-token:"]:
        check(hardening in text, f"{os.path.basename(unit)} lacks {hardening}")


def replica_unit_names_postgres():
    verifies(REPLICA_UNIT)
    text = unit_text(REPLICA_UNIT)
    words = exec_start(text)
    check(words[:2] == [INSTALLED, "serve"], f"ExecStart runs {words[:2]}")
    db = words[words.index("--db") + 1]
    check(db.startswith("postgres://"), f"the replica's --db is {db}")
    authority = db[len("postgres://"):].split("/")[0]
    check(":" not in authority.split("@")[0] and "password=" not in db, "the replica's --db holds a password")
    check(words[words.index("--db-password-file") + 1] == "%d/db-password", "no --db-password-file %d/db-password")
    check("LoadCredential=db-password:" in text, "no credential for the database password")
    # A PostgreSQL outage longer than systemd's default start limit must not leave it stopped.
    check("StartLimitIntervalSec=0" in text.split("[Service]")[0], "the replica unit gives up restarting")


def starts_as_it_says():
    words = exec_start(unit_text())
    check(words[:2] == [INSTALLED, "serve"], f"ExecStart runs {words[:2]}")
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        state, credentials = os.path.join(d, "state"), os.path.join(d, "credentials")
        os.mkdir(state)
        os.mkdir(credentials)
        os.chown(state, NOBODY, NOBODY)
        tokens = {"ingest-token": "ingest-0123456789abcdef0123456789", "read-token": "read-0123456789abcdef0123456789"}
        for name, token in tokens.items():
            with open(os.path.join(credentials, name), "w") as f:
                f.write(token + "\n")
        os.chmod(credentials, 0o755)
        args, db = [], None
        rest = iter(words[2:])
        for word in rest:
            if word == "--port":
                next(rest)   # the test's server takes port 0
            elif word == "--db":
                db = os.path.join(state, os.path.basename(next(rest)))
            elif word == "--web-root":
                next(rest)
                args += ["--web-root", os.path.join(ROOT, "Web")]
            else:
                args.append(word.replace("%d", credentials))
        check(db is not None, "ExecStart names no --db")
        server = Server(db, *args, user=NOBODY)
        try:
            event = {"id": "unit-1", "type": "activity.started", "activity_id": "u1", "booking_id": "BK-U1",
                     "attributes_type": "TimerWidgetAttributes", "occurred_at": 1795000000,
                     "content_state": {"startedAt": 1795000000}}
            body = json.dumps(event).encode()
            status, _, _ = server.request("POST", "/v1/events", body, {"Content-Type": "application/json"})
            check(status == 401, f"ingest without the token answered {status}")
            status, _, text = server.request("POST", "/v1/events", body, {
                "Content-Type": "application/json", "Authorization": "Bearer " + tokens["ingest-token"]})
            check(status == 200 and '"accepted":1' in text, f"ingest with the token answered {status} {text}")
            status, _, _ = server.request("GET", "/api/activities/u1")
            check(status == 401, f"the read API without its token answered {status}")
            status, _, text = server.request("GET", "/api/activities/u1",
                                             headers={"Authorization": "Bearer " + tokens["read-token"]})
            check(status == 200 and '"BK-U1"' in text, f"the read API with its token answered {status}")
        finally:
            code = server.stop()
        check(code == 0, f"SIGTERM: exit status {code}\n{server.log[-2000:]}")
        check(os.path.exists(db), "no database where the unit's --db says")


if __name__ == "__main__":
    check(shutil.which("systemd-analyze") is not None, "systemd-analyze is missing (Debian's systemd package)")
    main([("the unit passes systemd-analyze verify", verifies),
          ("the replica unit passes systemd-analyze verify and names PostgreSQL without a password",
           replica_unit_names_postgres),
          ("the unit's ExecStart starts the server as an unprivileged user with its credentials", starts_as_it_says)])
