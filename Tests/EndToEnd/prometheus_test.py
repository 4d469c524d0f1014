#!/usr/bin/env python3
"""End to end: `serve --demo` scraped by a real Prometheus; every dashboard query has data.

    python3 Tests/EndToEnd/prometheus_test.py

1. Starts the built server (`LAM_BIN`, default .build/debug/live-activity-monitor) with
   `serve --demo --port 0` on a fresh database, and Debian's /usr/bin/prometheus on a free
   loopback port, scraping it every second with job `live-activity-monitor` and loading
   Grafana/prometheus/alerts.yml, with its storage in a temporary directory. A second
   server, without the demo, in job `lam-apns-outage`, hears only of pushes and broadcasts
   answered 403 (a first deploy with a revoked key): it never has a status="200" series. A
   third, in job `lam-channels`, hears a scripted channel story once Prometheus has scraped
   its zeros: over 9,000 live channels, refused creates, broadcasts to a deleted channel and
   an expiration on a channel that keeps no message. A fourth, in job `lam-mix`, hears a
   known mix of token pushes and broadcasts, accepted, refused and without effect, twice,
   and is then restarted on its port and database.
2. Runs grafana_check's dashboard structure and promtool checks, and checks that the panels
   that chart two measures (a count beside a rate or a duration) draw each in its own unit,
   on an axis of its own.
3. Once Prometheus holds enough samples for rate() over `$__rate_interval` (4 s with a 1 s
   scrape interval), sends every panel, annotation and variable query of the dashboard, with
   the template variables substituted as Grafana does (grafana_check.check_queries); every
   panel query must return data. Retries for a while, since a series can appear a few
   seconds into the demo.
4. Checks what some panels say, not only that they answer: the push and broadcast error
   ratios read 100% for the outage job (and broadcasts 0% for the demo), the commit latency
   panel draws one line per instance, the channel panels count the demo's and the story's
   channels, subscribers, refusals, broadcasts to a deleted channel and expirations; the share
   of pushes without effect reads, for the known mix, each reason over the accepted pushes of
   its own kind (token pushes, or broadcasts) to the ninth decimal; the restart annotation,
   run and drawn as Grafana does (grafana_check.annotation_events), marks the restart at the
   new process's start time in the 1 h, 3 h, 24 h and 7 d views, wherever it falls between two
   of the query's steps.
5. Checks that Prometheus evaluated every alert rule of alerts.yml without error, that the
   channel alerts go pending on the story's and the outage's series (and not on the demo's),
   that every fault class the demo promises reached Prometheus, and that the server stops
   cleanly on SIGTERM while the demo runs.

Every process is always stopped and the temporary directory removed. Standard library
only; the last line is `N passed, M failed`; exits non-zero when a check fails.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grafana_check as gc  # noqa: E402  (beside this file)

ROOT = gc.ROOT
JOB = "live-activity-monitor"
SCRAPE_INTERVAL = "1s"
PROMETHEUS = "/usr/bin/prometheus"
# Enough scrapes that every rate window ($__rate_interval = 4 s) holds at least two samples
# taken after the demo's opening burst (about 4 s).
MIN_SCRAPES = 8
QUERY_DEADLINE_S = 45
STARTUP_TIMEOUT_S = 20

# A second monitor, without the demo, in a job of its own: every push it hears of was
# answered 403 ExpiredProviderToken, as on a first deploy with a revoked key. It has never
# seen a 200, so it has no status="200" series at all.
OUTAGE_JOB = "lam-apns-outage"
# A third monitor, without the demo, told a channel story by this test (feed_channel_story).
CHANNELS_JOB = "lam-channels"
# The story: live channels over 90% of APNs' 10,000 (LiveActivityChannelsNearLimit).
STORY_CHANNELS = 9001
# A fourth monitor, without the demo, told a known mix of pushes twice (feed_mix).
MIX_JOB = "lam-mix"
# What panel 35 must read for the mix: each reason over the accepted pushes of its own kind.
# An act: token pushes 3 applied, 1 to an unknown activity, 2 refused (429); broadcasts 1
# applied, 1 to a deleted channel, 2 refused (400). Over every request and broadcast, as the
# panel once divided, both would read 1/10.
MIX_SHARES = {"unknown_activity": 1 / 4, "unknown_channel": 1 / 2}
# Then the mix monitor is restarted, down this long: Prometheus misses a scrape or two and
# marks its series stale, as when a real monitor restarts.
RESTART_GAP_S = 2.5
# Time ranges an on-call picks, each with its own annotation step (1 min, 2 min, 15 min, 2 h).
ANNOTATION_VIEWS = {"1h": 3600, "3h": 3 * 3600, "24h": 86400, "7d": 7 * 86400}

# Every fault class and ending the demo promises, as a PromQL condition on what Prometheus
# scraped (the same list as DemoTrafficTests, one level further down the pipeline).
J = f'job="{JOB}"'
FAULT_CLASSES = {
    "token rotations": f"sum(liveactivity_push_token_rotations_total{{{J}}}) > 0",
    "pushes to the superseded token":
        f'sum(liveactivity_pushes_without_effect_total{{{J}, why="superseded_token"}}) > 0',
    "410 Unregistered":
        f'sum(liveactivity_push_requests_total{{{J}, status="410", reason="Unregistered"}}) > 0',
    "400 BadDeviceToken":
        f'sum(liveactivity_push_requests_total{{{J}, status="400", reason="BadDeviceToken"}}) > 0',
    "429 TooManyRequests":
        f'sum(liveactivity_push_requests_total{{{J}, status="429", reason="TooManyRequests"}}) > 0',
    "5xx": f'sum(liveactivity_push_requests_total{{{J}, status=~"5.."}}) > 0',
    "late (out-of-order) updates":
        f'sum(liveactivity_pushes_without_effect_total{{{J}, why="out_of_order"}}) > 0',
    "stale transitions": f"sum(liveactivity_stale_transitions_total{{{J}}}) > 0",
    "stale activities": f'sum(liveactivity_activities{{{J}, state="stale"}}) > 0',
    "ended by the system after 8 h": f'sum(liveactivity_activities_ended_total{{{J}, by="system"}}) > 0',
    "priority-10 heavy activities": f"sum(liveactivity_priority10_heavy_activities{{{J}}}) > 0",
    "ended by push": f'sum(liveactivity_activities_ended_total{{{J}, by="push"}}) > 0',
    "ended by the app": f'sum(liveactivity_activities_ended_total{{{J}, by="app"}}) > 0',
    "dismissals": f"sum(liveactivity_activities_dismissed_total{{{J}}}) > 0",
    # The two seed apps and the match (DemoTrafficTests: exactly these three types).
    "timers, rides and the match started":
        f"count(sum by (attributes_type) (liveactivity_activities_started_total{{{J}, "
        f'attributes_type=~"TimerWidgetAttributes|LiveActivityAttributes|MatchAttributes"}}) > 0) == 3 '
        f"and count(sum by (attributes_type) (liveactivity_activities_started_total{{{J}}})) == 3",
    "push-to-start": f'sum(liveactivity_activities_started_total{{{J}, source="push_to_start"}}) > 0',
    # What only the phone reveals (issue 21).
    "undecodable pushes":
        f'sum(liveactivity_pushes_without_effect_total{{{J}, why="undecodable_content"}}) > 0',
    "a timestamp in milliseconds":
        f'sum(liveactivity_push_warnings_total{{{J}, warning="timestamp_in_future"}}) > 0',
    "payloads over 4 KB": f'sum(liveactivity_push_warnings_total{{{J}, warning="payload_too_large"}}) > 0',
    "a reason APNs never gave": f'sum(liveactivity_push_warnings_total{{{J}, warning="unknown_reason"}}) > 0',
    "deliveries confirmed": f'sum(liveactivity_push_deliveries_total{{{J}, outcome="confirmed"}}) > 0',
    "deliveries missed": f'sum(liveactivity_push_deliveries_total{{{J}, outcome="missed"}}) > 0',
    "start pushes that started an activity": f'sum(liveactivity_push_to_start_total{{{J}, outcome="started"}}) > 0',
    "start pushes that started nothing": f'sum(liveactivity_push_to_start_total{{{J}, outcome="not_started"}}) > 0',
    "push-to-start tokens": f"sum(liveactivity_push_to_start_tokens{{{J}}}) > 0",
    "content shapes known": f"sum(liveactivity_content_shape_types{{{J}}}) > 0",
    # The live match on a broadcast channel (issue 22).
    "broadcasts answered 200": f'sum(liveactivity_broadcast_pushes_total{{{J}, status="200"}}) > 0',
    "priority-1 and priority-10 broadcasts":
        f'count(sum by (priority) (liveactivity_broadcast_pushes_total{{{J}, priority=~"1|10"}})) == 2',
    "activities subscribed to a channel": f"sum(liveactivity_channel_subscriptions{{{J}}}) > 0",
    "live channels of both storage policies": f"count(liveactivity_channels{{{J}}} > 0) == 2",
    "channels created (201)": f'sum(liveactivity_channel_requests_total{{{J}, op="create", status="201"}}) > 0',
    "a channel deleted (204)": f'sum(liveactivity_channel_requests_total{{{J}, op="delete", status="204"}}) > 0',
    "a refused channel create":
        f'sum(liveactivity_channel_requests_total{{{J}, op="create", status="400", reason="CannotCreateChannelConfig"}}) > 0',
    "a broadcast to a deleted channel":
        f'sum(liveactivity_pushes_without_effect_total{{{J}, why="unknown_channel"}}) > 0',
    "an expiration on a no-storage channel":
        f'sum(liveactivity_push_warnings_total{{{J}, warning="expiration_on_no_storage_channel"}}) > 0',
}


# Panels that chart two measures: each query's unit and axis side (grafana_check.series_units).
# Ids, not titles: links and this test name them so.
TWO_AXIS_PANELS = {
    55: {"A": ("reqps", "left"), "B": ("short", "right")},  # undecodable pushes/s; types known
    59: {"A": ("short", "left"), "B": ("s", "right")},  # devices with a token; p90 time to start
}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url: str, timeout: float = 5) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except OSError as e:
        return 0, str(e)


def wait_for(what: str, condition, timeout: float, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def start_server(binary: Path, tmp: Path, name: str = "server", demo: bool = True, port: int = 0,
                 log_name: str | None = None) -> tuple[subprocess.Popen, int, Path]:
    """`serve` on `port` (0: a free one) with the database `name`.sqlite."""
    log = tmp / f"{log_name or name}.log"
    env = dict(os.environ)
    for key in [k for k in env if k.startswith("LAM_")]:
        del env[key]  # flags only: a developer's LAM_* must not change the run
    proc = subprocess.Popen(
        [str(binary), "serve"] + (["--demo"] if demo else []) + [
         "--port", str(port), "--db", str(tmp / f"{name}.sqlite"), "--web-root", str(ROOT / "Web")],
        cwd=tmp, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=open(log, "wb"))

    def port():
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {log.read_text()[-2000:]}")
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", log.read_text(errors="replace"))
        return int(m.group(1)) if m else None

    return proc, wait_for("the server to listen", port, STARTUP_TIMEOUT_S), log


def start_prometheus(tmp: Path, target_port: int, outage_port: int, channels_port: int,
                     mix_port: int) -> tuple[subprocess.Popen, str, Path]:
    port = free_port()
    config = tmp / "prometheus.yml"
    # rule_files takes the repository's alerts.yml by absolute path: the file under test.
    config.write_text(f"""\
global:
  scrape_interval: {SCRAPE_INTERVAL}
  scrape_timeout: {SCRAPE_INTERVAL}
  evaluation_interval: {SCRAPE_INTERVAL}
rule_files:
  - {gc.ALERTS}
scrape_configs:
  - job_name: {JOB}
    static_configs:
      - targets: ["127.0.0.1:{target_port}"]
  - job_name: {OUTAGE_JOB}
    static_configs:
      - targets: ["127.0.0.1:{outage_port}"]
  - job_name: {CHANNELS_JOB}
    static_configs:
      - targets: ["127.0.0.1:{channels_port}"]
  - job_name: {MIX_JOB}
    static_configs:
      - targets: ["127.0.0.1:{mix_port}"]
""")
    log = tmp / "prometheus.log"
    proc = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
        cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(log, "wb"))
    url = f"http://127.0.0.1:{port}"

    def ready():
        if proc.poll() is not None:
            raise RuntimeError(f"prometheus exited with {proc.returncode}: {log.read_text()[-2000:]}")
        return http_get(url + "/-/ready", timeout=2)[0] == 200

    wait_for("Prometheus to be ready", ready, STARTUP_TIMEOUT_S)
    return proc, url, log


def scalar(url: str, expr: str) -> float | None:
    body = gc.query(url, expr)
    result = body.get("data", {}).get("result") if body.get("status") == "success" else None
    if not result:
        return None
    return float(result[0]["value"][1])


def stop(proc: subprocess.Popen | None, name: str, results: list[gc.CheckResult] | None = None) -> None:
    """SIGTERM, then SIGKILL after 10 s; with `results`, a clean exit 0 is a check."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    started = time.monotonic()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if results is not None:
        took = time.monotonic() - started
        check = f"{name} stops on SIGTERM with status 0 while the demo runs"
        results.append(gc._ok(check, f"{took:.1f} s") if proc.returncode == 0
                       else gc._fail(check, f"status {proc.returncode} after {took:.1f} s"))


def post_events(port: int, events: list[dict]) -> None:
    """POST /v1/events; raises unless every event was accepted."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/events", data=json.dumps(events).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as r:
        answer = json.load(r)
    if answer.get("accepted") != len(events):
        raise RuntimeError(f"posted {len(events)} events, answer {answer}")


def feed_outage(port: int, stop_event: threading.Event) -> None:
    """Reports a failed push and a failed broadcast (403 ExpiredProviderToken) every 0.2 s
    until stopped."""
    n = 0
    while not stop_event.is_set():
        n += 1
        now = time.time()
        push = {"id": f"outage-{n}", "type": "push.sent", "activity_id": "A-OUTAGE",
                "booking_id": "BK-OUTAGE", "occurred_at": now, "event": "update",
                "priority": 10, "status": 403, "reason": "ExpiredProviderToken",
                "latency_ms": 20, "push_token": "80a1" * 16}
        broadcast = {"id": f"outage-broadcast-{n}", "type": "push.sent", "channel_id": "OUTAGE-CHANNEL==",
                     "occurred_at": now, "event": "update", "priority": 10, "status": 403,
                     "reason": "ExpiredProviderToken", "latency_ms": 20}
        try:
            post_events(port, [push, broadcast])
        except (OSError, RuntimeError, ValueError):
            pass
        stop_event.wait(0.2)


def channel_event(n: int, kind: str, channel: str | None, status: int, **fields) -> dict:
    event = {"id": f"story-{n}", "type": kind, "occurred_at": time.time(), "app": "com.example.story",
             "status": status, "latency_ms": 40, **fields}
    if channel is not None:
        event["channel_id"] = channel
    return event


def broadcast_event(n: int, channel: str, **fields) -> dict:
    return {"id": f"story-{n}", "type": "push.sent", "channel_id": channel, "occurred_at": time.time(),
            "app": "com.example.story", "event": "update", "priority": 10, "status": 200,
            "latency_ms": 50, **fields}


def feed_channel_story(url: str, port: int) -> list[gc.CheckResult]:
    """Tells the channels monitor a story in two acts, each once Prometheus has scraped the
    one before (a counter's first increment is seen only after its zero, or its series):
    1. a no-storage channel published to with an expiration; a channel created and deleted;
       a create refused 400 CannotCreateChannelConfig; STORY_CHANNELS more channels (policy 1).
    2. four more refused creates; three 200 broadcasts to the deleted channel.
    """
    job = f'job="{CHANNELS_JOB}"'
    refused = f'liveactivity_channel_requests_total{{{job}, op="create", status="400"}}'
    n = 0

    def next_id() -> int:
        nonlocal n
        n += 1
        return n

    began = time.monotonic()
    act1 = [channel_event(next_id(), "channel.created", "QUIET-CHANNEL==", 201, storage_policy=0),
            broadcast_event(next_id(), "QUIET-CHANNEL==", priority=5, expiration=int(time.time()) + 3600),
            channel_event(next_id(), "channel.created", "OLD-CHANNEL==", 201, storage_policy=1),
            channel_event(next_id(), "channel.deleted", "OLD-CHANNEL==", 204),
            channel_event(next_id(), "channel.created", None, 400, storage_policy=1,
                          reason="CannotCreateChannelConfig")]
    post_events(port, act1)
    for start in range(0, STORY_CHANNELS, 1000):
        post_events(port, [channel_event(next_id(), "channel.created", f"STORY-{i:05d}==", 201, storage_policy=1)
                           for i in range(start, min(start + 1000, STORY_CHANNELS))])
    wait_for("Prometheus to scrape act 1 of the channel story",
             lambda: scalar(url, f'sum(liveactivity_channels{{{job}}})') == STORY_CHANNELS + 1
             and scalar(url, refused) == 1, 20, 0.5)
    post_events(port, [channel_event(next_id(), "channel.created", None, 400, storage_policy=1,
                                     reason="CannotCreateChannelConfig") for _ in range(4)]
                + [broadcast_event(next_id(), "OLD-CHANNEL==") for _ in range(3)])
    unknown = f'liveactivity_pushes_without_effect_total{{{job}, why="unknown_channel"}}'
    wait_for("Prometheus to scrape act 2 of the channel story",
             lambda: scalar(url, refused) == 5 and scalar(url, unknown) == 3, 20, 0.5)
    return [gc._ok(f"the channel story reached Prometheus ({n} events)",
                   f"{time.monotonic() - began:.1f} s")]


def check_two_axis_panels() -> list[gc.CheckResult]:
    """A count beside a rate or a duration: each on an axis of its own, in its own unit."""
    panels = {p.get("id"): p for p in gc.all_panels(gc.load_dashboard())}
    results = []
    for panel_id, want in TWO_AXIS_PANELS.items():
        panel = panels.get(panel_id, {})
        got, problems = gc.series_units(panel)
        name = (f"panel {panel_id} {panel.get('title')!r}: "
                + ", ".join(f"{ref} in {unit} on the {side} axis" for ref, (unit, side) in want.items()))
        results.append(gc._ok(name) if got == want and not problems
                       else gc._fail(name, f"got {got} {problems}".strip()))
    return results


def mix_act(act: int, now: float) -> list[dict]:
    """One act of the known mix (MIX_SHARES), its events dated up to `now`. The first act also
    creates and deletes the channel that both acts' broadcast finds deleted."""
    token, activity = f"{0xA0 + act:02x}" * 32, f"MIX-{act}"
    events = []

    def add(at: float, **fields) -> None:
        events.append({"id": f"mix-{act}-{len(events)}", "occurred_at": at, "app": "com.example.mix", **fields})

    def push(at: float, status: int, target: str = activity, **fields) -> None:
        add(at, type="push.sent", activity_id=target, push_token=token, event="update", priority=10,
            status=status, latency_ms=30, content_state={"step": len(events)}, **fields)

    def broadcast(at: float, channel: str, status: int, **fields) -> None:
        add(at, type="push.sent", channel_id=channel, event="update", priority=10, status=status,
            latency_ms=30, **fields)

    add(now - 3, type="activity.started", activity_id=activity, booking_id=f"BK-{activity}",
        attributes_type="MixAttributes", push_token=token, content_state={"step": 0})
    if act == 1:
        add(now - 2.5, type="channel.created", channel_id="MIX-GONE==", status=201, latency_ms=30, storage_policy=1)
        add(now - 2.4, type="channel.deleted", channel_id="MIX-GONE==", status=204, latency_ms=30)
    for i in range(3):
        push(now - 2 + i / 10, 200)
    push(now - 1.5, 200, target=f"MIX-GHOST-{act}")
    for i in range(2):
        push(now - 1.4 + i / 10, 429, reason="TooManyRequests")
    broadcast(now - 1, "MIX-GONE==", 200)
    broadcast(now - 0.9, "MIX-LIVE==", 200)
    for i in range(2):
        broadcast(now - 0.8 + i / 10, "MIX-LIVE==", 400, reason="BadChannelId")
    return events


def feed_mix(url: str, port: int) -> tuple[float, int]:
    """Tells the mix monitor the known mix twice, each act once Prometheus has scraped the one
    before. Returns (end, seconds): a window that holds the second act and, before it, only
    samples taken after the first. Every series that the ratio reads then starts the window
    at one act's count and grows by one act's count, on the same scrapes, so that rate()
    extrapolates each alike and the panel's ratio is the mix's exactly."""
    job = f'job="{MIX_JOB}"'
    accepted = (f'sum(liveactivity_push_requests_total{{{job}, status="200"}}) '
                f'+ sum(liveactivity_broadcast_pushes_total{{{job}, status="200"}})')
    post_events(port, mix_act(1, time.time()))
    wait_for("Prometheus to scrape act 1 of the mix", lambda: scalar(url, accepted) == 6, 20, 0.25)
    start = time.time() + 0.5  # after the first sample that holds act 1
    time.sleep(3)  # a few scrapes of act 1 alone in the window
    post_events(port, mix_act(2, time.time()))
    wait_for("Prometheus to scrape act 2 of the mix", lambda: scalar(url, accepted) == 12, 20, 0.25)
    seconds = int(time.time() - start) + 1
    time.sleep(max(0.0, start + seconds - time.time()) + 0.2)  # the window ends in the past
    return start + seconds, seconds


def restart_monitor(binary: Path, tmp: Path, proc: subprocess.Popen, name: str, port: int,
                    url: str, job: str) -> tuple[subprocess.Popen, Path, float | None]:
    """Stops a monitor without the demo and starts it again on the same port and database;
    returns the new process, its log and the start time Prometheus scraped of the old one."""
    before = scalar(url, f'process_start_time_seconds{{job="{job}"}}')
    stop(proc, name)
    time.sleep(RESTART_GAP_S)
    proc, _, log = start_server(binary, tmp, name=name, demo=False, port=port, log_name=f"{name}-restarted")
    return proc, log, before


def scraped_restart(url: str, port: int, job: str, before: float | None) -> dict:
    """Waits for Prometheus to scrape the restarted monitor on `port`; returns {instance,
    before, after, first_seen}: the process start times before and after the restart, and
    when Prometheus first scraped the new process."""
    selector = f'process_start_time_seconds{{job="{job}"}}'
    status, text = http_get(f"http://127.0.0.1:{port}/metrics")
    m = re.search(r"^process_start_time_seconds (\S+)$", text, re.M)
    if status != 200 or not m:
        raise RuntimeError(f"no process_start_time_seconds from the restarted monitor (HTTP {status})")
    after = float(m.group(1))
    wait_for("Prometheus to scrape the restarted monitor", lambda: scalar(url, selector) == after, 20, 0.25)
    samples = gc.query(url, f"{selector}[5m]")["data"]["result"][0]["values"]
    first_seen = min(float(t) for t, v in samples if float(v) == after)
    return {"instance": f"127.0.0.1:{port}", "before": before, "after": after, "first_seen": first_seen}


def check_restart_annotation(url: str, restart: dict) -> list[gc.CheckResult]:
    """The restart annotation, as Grafana runs and draws it, marks the test's restart at the new
    process's start time (its start, as a point or a bound of a region, and no other time), in
    every view, wherever the restart falls between two steps of the query: its next step 1 s,
    half a step and a step less 1 s after Prometheus first scraped the new process. Steps after
    Prometheus' last scrape are evaluated on what it holds, as it would answer then (the new
    process keeps its start time; no later sample changes a range function's answer)."""
    annotation = next(a for a in gc.prometheus_annotations(gc.load_dashboard())
                      if "process_start_time_seconds" in a["expr"])
    instance, want = restart["instance"], math.floor(restart["after"] * 1000)
    starts = {math.floor(restart[k] * 1000) for k in ("before", "after") if restart[k] is not None}
    base = gc.GrafanaContext(job_values=[MIX_JOB], instance_values=[instance], scrape_interval_s=1)
    results = []
    for view, range_s in ANNOTATION_VIEWS.items():
        ctx = gc.annotation_context(base, annotation, range_s)
        step, wrong = ctx.interval_s, []
        for phase in (1, step / 2, step - 1):
            try:
                events = [e for e in gc.annotation_events(url, annotation, ctx, restart["first_seen"] + phase)
                          if e["labels"].get("instance") == instance]
            except RuntimeError as e:
                wrong.append(str(e))
                continue
            bounds = {e["time"] for e in events} | {e["time_end"] for e in events}
            if want not in bounds or not bounds <= starts or any(e["text"] != instance for e in events):
                wrong.append(f"next step {phase:.0f} s after: events {[(e['time'], e['time_end']) for e in events]}")
        name = (f"annotation {annotation.get('name')!r} marks the test's restart at its start time in a {view} view "
                f"(step {step} s), wherever it falls between two steps")
        results.append(gc._fail(name, f"start {want} ms; " + "; ".join(wrong)) if wrong else gc._ok(name))
    return results


def check_without_effect_share(url: str, window: tuple[float, int]) -> list[gc.CheckResult]:
    """Panel 35 in the known mix: each reason as a share of the accepted pushes of its kind,
    every reason charted once."""
    end, seconds = window
    # $__rate_interval = max($__interval + scrape, 4 × scrape) = the window.
    ctx = gc.GrafanaContext(job_values=[MIX_JOB], instance_values=gc.instance_values(url, [MIX_JOB]),
                            scrape_interval_s=1, interval_s=seconds - 1)
    panel = next(p for p in gc.all_panels(gc.load_dashboard()) if p.get("id") == 35)
    shares, charted = {}, []
    for target in panel.get("targets") or []:
        body = gc.query(url, ctx.interpolate(target["expr"]), at=end)
        for r in body.get("data", {}).get("result", []):
            charted.append(r["metric"].get("why"))
            if float(r["value"][1]):
                shares[r["metric"].get("why")] = round(float(r["value"][1]), 9)
    reasons = set(series_of(url, f'liveactivity_pushes_without_effect_total{{job="{MIX_JOB}"}}', "why"))
    want = {why: round(share, 9) for why, share in MIX_SHARES.items()}
    name = (f"panel 35 {panel.get('title')!r} in a known mix: unknown_activity 25% of accepted token pushes, "
            "unknown_channel 50% of accepted broadcasts, every reason charted once")
    once = sorted(charted) == sorted(why for (why,) in reasons)
    return [gc._ok(name) if shares == want and once
            else gc._fail(name, f"{shares}, want {want}; reasons charted {sorted(charted, key=str)}")]


def panel_expr(title: str, ref_id: str = "A") -> str:
    for t, r, expr in gc.panel_queries(gc.load_dashboard()):
        if t == title and r == ref_id:
            return expr
    raise KeyError(f"no panel {title!r} {ref_id}")


def check_semantics(url: str, demo_port: int, outage_port: int) -> list[gc.CheckResult]:
    """What the panels say, not only that they answer: values an operator relies on."""
    results = []
    rate_s = 4 * int(gc.parse_duration(SCRAPE_INTERVAL))

    def ctx(jobs: list[str], instances: list[str] | None = None) -> gc.GrafanaContext:
        return gc.GrafanaContext(job_values=jobs, scrape_interval_s=rate_s // 4, interval_s=rate_s // 4,
                                 instance_values=instances or gc.instance_values(url, jobs))

    # Every push failing: the error-ratio stat must read 100%, not "No data".
    name = "stat 'Push error ratio' reads 1 when every push fails (no status=\"200\" series)"
    value = scalar(url, ctx([OUTAGE_JOB]).interpolate(panel_expr("Push error ratio")))
    results.append(gc._ok(name) if value == 1 else gc._fail(name, f"value {value}"))

    # Store commit latency: one line per instance (each has its own disk), never pooled.
    name = "panel 'Store commit latency' p99: one series per instance"
    body = gc.query(url, ctx([JOB, OUTAGE_JOB]).interpolate(panel_expr("Store commit latency", "B")))
    instances = sorted(r["metric"].get("instance", "") for r in body.get("data", {}).get("result", []))
    want = sorted([f"127.0.0.1:{demo_port}", f"127.0.0.1:{outage_port}"])
    results.append(gc._ok(name) if instances == want else gc._fail(name, f"{instances}, want {want}"))

    # The instance variable narrows every panel: both jobs, only the outage instance selected.
    only = f"127.0.0.1:{outage_port}"
    name = "instance variable narrows panels to the selected instance"
    narrowed = ctx([JOB, OUTAGE_JOB], [only])
    body = gc.query(url, narrowed.interpolate(panel_expr("Store commit latency", "B")))
    got = sorted(r["metric"].get("instance", "") for r in body.get("data", {}).get("result", []))
    ratio = scalar(url, narrowed.interpolate(panel_expr("Push error ratio")))
    results.append(gc._ok(name) if got == [only] and ratio == 1
                   else gc._fail(name, f"commit p99 instances {got}, error ratio {ratio}"))
    return results + check_channel_panels(url, ctx)


def series_of(url: str, expr: str, *labels: str) -> dict[tuple[str, ...], float]:
    """An instant query's result as {label values: value}."""
    body = gc.query(url, expr)
    return {tuple(r["metric"].get(label, "") for label in labels): float(r["value"][1])
            for r in body.get("data", {}).get("result", [])}


def check_channel_panels(url: str, ctx) -> list[gc.CheckResult]:
    """The 'Broadcast channels' row says what the demo, the outage and the story did."""
    results = []

    def check(name: str, got, want) -> None:
        results.append(gc._ok(name) if got == want else gc._fail(name, f"{got}, want {want}"))

    # A window that holds the demo's broadcasts (one every 10 s) and the story (Grafana's
    # $__rate_interval grows so with the dashboard's time range).
    def wide(jobs: list[str]) -> gc.GrafanaContext:
        c = ctx(jobs)
        c.interval_s = 60
        return c

    ratio = panel_expr("Broadcast error ratio")
    check("panel 'Broadcast error ratio' reads 1 when every broadcast fails (no status=\"200\" series)",
          scalar(url, ctx([OUTAGE_JOB]).interpolate(ratio)), 1)
    check("panel 'Broadcast error ratio' reads 0 when every broadcast is answered 200 (no error series)",
          scalar(url, wide([JOB]).interpolate(ratio)), 0)

    channels = panel_expr("Live channels vs the 10,000 limit")
    check("panel 'Live channels' counts the demo's live channels by storage policy (not the deleted one)",
          series_of(url, ctx([JOB]).interpolate(channels), "storage_policy"), {("0",): 1, ("1",): 1})
    check(f"panel 'Live channels' counts the story's {STORY_CHANNELS + 1} live channels by storage policy",
          series_of(url, ctx([CHANNELS_JOB]).interpolate(channels), "storage_policy"),
          {("0",): 1, ("1",): STORY_CHANNELS})

    subscribed = series_of(url, ctx([JOB]).interpolate(panel_expr("Subscribed activities by type")),
                           "attributes_type")
    check("panel 'Subscribed activities by type': the match's 24 fans, no other activity",
          {k: v for k, v in subscribed.items() if v}, {("MatchAttributes",): 24})

    answers = set(series_of(url, wide([CHANNELS_JOB]).interpolate(
        panel_expr("Channel management requests by op and answer")), "op", "status", "reason"))
    check("panel 'Channel management requests' splits the story's requests by op and answer", answers,
          {("create", "201", "none"), ("create", "400", "CannotCreateChannelConfig"), ("delete", "204", "none")})

    for title in ("Broadcasts to deleted channels", "Expiration on no-storage channels"):
        value = scalar(url, wide([CHANNELS_JOB]).interpolate(panel_expr(title)))
        name = f"panel {title!r} shows the story's broadcasts"
        results.append(gc._ok(name, f"{value:.3f}/s") if value and value > 0 else gc._fail(name, f"value {value}"))
    return results


def check_channel_alerts(url: str) -> list[gc.CheckResult]:
    """The channel alerts select the series the server exports: pending (their `for:` is minutes)
    where the story or the outage call for them, never for the demo's healthy channels."""
    expect = {
        ("LiveActivityChannelsNearLimit", CHANNELS_JOB),
        ("LiveActivityBroadcastsToDeletedChannels", CHANNELS_JOB),
        ("LiveActivityChannelRequestsFailing", CHANNELS_JOB),
        ("LiveActivityBroadcastErrors", OUTAGE_JOB),
    }
    never = {(name, JOB) for name in ("LiveActivityChannelsNearLimit", "LiveActivityBroadcastErrors",
                                      "LiveActivityChannelRequestsFailing")}

    def active():
        body = gc._api(url, "/api/v1/alerts")
        alerts = body.get("data", {}).get("alerts", [])
        return {(a["labels"].get("alertname"), a["labels"].get("job")): a for a in alerts}

    def all_expected():
        alerts = active()
        return alerts if expect <= set(alerts) else None

    try:
        seen = wait_for("the channel alerts to go pending", all_expected, 20, 0.5)
    except TimeoutError:
        seen = active()
    results = []
    for name, job in sorted(expect):
        alert = seen.get((name, job))
        check = f"alert {name} is active for job {job}"
        results.append(gc._ok(check, alert["state"]) if alert else gc._fail(check, f"active: {sorted(seen)}"))
    refused = seen.get(("LiveActivityChannelRequestsFailing", CHANNELS_JOB))
    if refused:
        labels = {k: refused["labels"].get(k) for k in ("op", "status", "reason")}
        want = {"op": "create", "status": "400", "reason": "CannotCreateChannelConfig"}
        check = "alert LiveActivityChannelRequestsFailing names the op and answer"
        results.append(gc._ok(check) if labels == want else gc._fail(check, f"{labels}, want {want}"))
    wrong = sorted(never & set(seen))
    check = "no channel alert for the demo's healthy broadcasts and channels"
    results.append(gc._fail(check, f"active: {wrong}") if wrong else gc._ok(check))
    return results


def check_rules(url: str) -> list[gc.CheckResult]:
    """Prometheus itself evaluated every rule of alerts.yml, without error."""
    expected = [r.name for r in gc.parse_rules()]

    def evaluated():
        body = gc._api(url, "/api/v1/rules")
        rules = [r for g in body.get("data", {}).get("groups", []) for r in g.get("rules", [])]
        done = [r for r in rules if not r.get("lastEvaluation", "").startswith("0001")]
        return rules if rules and len(done) == len(rules) else None

    try:
        rules = wait_for("every rule to be evaluated", evaluated, 15, interval=0.5)
    except TimeoutError as e:
        return [gc._fail("Prometheus evaluates every alert rule", str(e))]
    results = []
    loaded = [r.get("name") for r in rules]
    results.append(gc._ok(f"Prometheus loaded all {len(expected)} rules of alerts.yml")
                   if sorted(loaded) == sorted(expected)
                   else gc._fail("Prometheus loaded every rule of alerts.yml", f"{loaded} vs {expected}"))
    for r in rules:
        name = f"alert {r.get('name')} evaluates in Prometheus"
        results.append(gc._ok(name, f"state {r.get('state')}") if r.get("health") == "ok"
                       else gc._fail(name, f"health {r.get('health')}: {r.get('lastError')}"))
    return results


def main() -> int:
    binary = Path(os.environ.get("LAM_BIN", ROOT / ".build" / "debug" / "live-activity-monitor"))
    results: list[gc.CheckResult] = []
    if not binary.is_file():
        results.append(gc._fail("server binary exists", f"{binary} (run swift build first)"))
    if not Path(PROMETHEUS).is_file():
        results.append(gc._fail("prometheus installed", f"{PROMETHEUS} missing (apt-get install prometheus)"))
    if results:
        gc._print(results)
        print(f"0 passed, {len(results)} failed")
        return 1

    print("== Dashboard structure")
    section = gc.check_dashboard_structure(gc.load_dashboard()) + gc.check_provisioning() + check_two_axis_panels()
    gc._print(section)
    results += section
    print("== Prometheus config and rules (promtool)")
    section = gc.check_prometheus_files()
    gc._print(section)
    results += section

    tmp = Path(tempfile.mkdtemp(prefix="lam-prometheus-test-"))
    server = prometheus = outage = channels = mix = None
    server_log = prometheus_log = outage_log = channels_log = mix_log = None
    stop_feeding = threading.Event()
    began = time.monotonic()
    try:
        server, port, server_log = start_server(binary, tmp)
        outage, outage_port, outage_log = start_server(binary, tmp, name="outage", demo=False)
        threading.Thread(target=feed_outage, args=(outage_port, stop_feeding), daemon=True).start()
        channels, channels_port, channels_log = start_server(binary, tmp, name="channels", demo=False)
        mix, mix_port, mix_log = start_server(binary, tmp, name="mix", demo=False)
        prometheus, url, prometheus_log = start_prometheus(tmp, port, outage_port, channels_port, mix_port)
        print(f"== Live: server on 127.0.0.1:{port} with --demo, Prometheus on {url}")
        section = [gc._ok("server logs that the demo runs")
                   if "demo:" in server_log.read_text(errors="replace")
                   else gc._fail("server logs that the demo runs", server_log.read_text()[-500:])]

        scrapes = f'count_over_time(up{{job="{JOB}"}}[1m])'
        wait_for(f"{MIN_SCRAPES} scrapes", lambda: (scalar(url, scrapes) or 0) >= MIN_SCRAPES, 30, 0.5)
        up = scalar(url, f'up{{job="{JOB}"}}')
        section.append(gc._ok("Prometheus scrapes the server") if up == 1
                       else gc._fail("Prometheus scrapes the server", f"up = {up}"))
        channel_scrapes = f'count_over_time(up{{job="{CHANNELS_JOB}"}}[1m])'
        wait_for("the channels monitor's first scrapes", lambda: (scalar(url, channel_scrapes) or 0) >= 2, 30, 0.5)
        section += feed_channel_story(url, channels_port)
        mix_window = feed_mix(url, mix_port)
        mix, mix_log, before = restart_monitor(binary, tmp, mix, "mix", mix_port, url, MIX_JOB)
        restart = scraped_restart(url, mix_port, MIX_JOB, before)

        # Every panel must return data; retry while a series may still be about to appear.
        deadline = time.monotonic() + QUERY_DEADLINE_S
        while True:
            queries = gc.check_queries(url, JOB, scrape_interval=SCRAPE_INTERVAL,
                                       interval=SCRAPE_INTERVAL, verbose=False)
            if all(r.passed for r in queries) or time.monotonic() > deadline:
                break
            time.sleep(2)
        section += queries

        missing = []
        for name, expr in FAULT_CLASSES.items():
            if scalar(url, expr) is None:
                missing.append(name)
        section.append(gc._fail("every demo fault class reached Prometheus", ", ".join(missing))
                       if missing else gc._ok(f"all {len(FAULT_CLASSES)} demo fault classes reached Prometheus"))
        section += check_semantics(url, port, outage_port)
        section += check_without_effect_share(url, mix_window)
        section += check_restart_annotation(url, restart)
        section += check_rules(url)
        section += check_channel_alerts(url)
        gc._print(section)
        results += section
        final = []
        stop(server, "the server", final)
        gc._print(final)
        results += final
    except (TimeoutError, RuntimeError, OSError) as e:
        results.append(gc._fail("live run", f"{type(e).__name__}: {e}"))
        gc._print(results[-1:])
    finally:
        stop_feeding.set()
        stop(outage, "outage server")
        stop(channels, "channels server")
        stop(mix, "mix server")
        stop(server, "server")
        stop(prometheus, "prometheus")
        failed = [r for r in results if not r.passed]
        if failed:
            for log in (server_log, outage_log, channels_log, mix_log, prometheus_log):
                if log is not None and log.exists():
                    print(f"--- last lines of {log.name}")
                    print("\n".join(log.read_text(errors="replace").splitlines()[-15:]))
        shutil.rmtree(tmp, ignore_errors=True)

    failed = [r for r in results if not r.passed]
    if failed:
        print("\nFailures:")
        gc._print(failed)
    print(f"(live part took {time.monotonic() - began:.0f} s)")
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
