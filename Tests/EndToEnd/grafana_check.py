#!/usr/bin/env python3
"""Checks the Grafana/ directory: dashboard structure, Prometheus rules, live queries.

    python3 Tests/EndToEnd/grafana_check.py [--prometheus-url URL] [--job JOB]

1. The dashboard JSON: stable uid, `datasource`, `job` and `instance` variables, unique panel ids,
   gridPos inside 24 columns without overlaps, every panel with a datasource variable,
   targets with an expression filtered by `job=~"$job", instance=~"$instance"` and a unit that fits
   what each query measures (a rate per second, a quantile of seconds in seconds, a gauge a count),
   one unit per axis (a second measure on an axis of its own); every metric of
   DESIGN.md section 5 charted somewhere; the 4096-byte payload and 10,000-channel limit lines;
   the provisioning files.
2. `promtool check config`, `promtool check rules` and `promtool test rules` (a missing
   promtool is a failure), and every alert has a unit-test case that fires and one
   that does not.
3. With --prometheus-url: every panel, annotation and variable query, with its template
   variables substituted the way Grafana does, is sent to /api/v1/query; each panel
   query must succeed AND return data. Alert expressions must succeed (data not required).
   An annotation's variables are those Grafana's backend gives an annotation query
   (annotation_context: $__interval is its step); `annotation_events` runs one over a view
   and turns its answer into the events Grafana draws, for tests that look at them.

Standard library only. Exits non-zero when any check fails; the last line is
`N passed, M failed`. `check_queries(prometheus_url, job)` is usable as a library
function from other end-to-end tests.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GRAFANA = ROOT / "Grafana"
DASHBOARD = GRAFANA / "dashboards" / "live-activity-monitor.json"
DATASOURCE_PROVISIONING = GRAFANA / "provisioning" / "datasources" / "prometheus.yml"
DASHBOARD_PROVISIONING = GRAFANA / "provisioning" / "dashboards" / "live-activity-monitor.yml"
PROMETHEUS_CONFIG = GRAFANA / "prometheus" / "prometheus.yml"
ALERTS = GRAFANA / "prometheus" / "alerts.yml"
ALERTS_TEST = GRAFANA / "prometheus" / "alerts_test.yml"
README = GRAFANA / "README.md"

# Links, bookmarks and provisioning name the dashboard by this uid: never change it.
DASHBOARD_UID = "live-activity-monitor"
DATASOURCE_REF = {"type": "prometheus", "uid": "${datasource}"}
JOB_FILTER = 'job=~"$job"'
JOB_VARIABLE_QUERY = "label_values(liveactivity_build_info, job)"
# With several monitors (shards) in a job, every panel can be narrowed to some of them.
INSTANCE_FILTER = 'instance=~"$instance"'
INSTANCE_VARIABLE_QUERY = 'label_values(liveactivity_build_info{job=~"$job"}, instance)'
PAYLOAD_LIMIT_BYTES = 4096
# APNs: at most 10,000 broadcast channels per app and environment (DESIGN.md section 2).
CHANNEL_LIMIT = 10000

# Every family of DESIGN.md section 5 must be charted somewhere.
EXPECTED_METRICS = [
    "liveactivity_activities",
    "liveactivity_activities_started_total",
    "liveactivity_activities_ended_total",
    "liveactivity_activities_dismissed_total",
    "liveactivity_stale_transitions_total",
    "liveactivity_push_requests_total",
    "liveactivity_push_latency_seconds_bucket",
    "liveactivity_push_payload_bytes_bucket",
    "liveactivity_push_token_rotations_total",
    "liveactivity_push_tokens_invalidated_total",
    "liveactivity_pushes_without_effect_total",
    "liveactivity_priority10_heavy_activities",
    "liveactivity_ingest_events_total",
    "liveactivity_ingest_rejected_total",
    "liveactivity_ingest_duplicates_total",
    "liveactivity_store_commit_seconds_bucket",
    "liveactivity_store_size_bytes",
    "liveactivity_http_requests_total",
    "liveactivity_build_info",
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "process_open_fds",
    "process_max_fds",
    "process_start_time_seconds",
    # Version 2: delivery truth, broadcasts and channels.
    "liveactivity_push_warnings_total",
    "liveactivity_push_deliveries_total",
    "liveactivity_push_delivery_seconds_bucket",
    "liveactivity_push_to_start_total",
    "liveactivity_push_to_start_seconds_bucket",
    "liveactivity_push_to_start_tokens",
    "liveactivity_content_shape_types",
    "liveactivity_broadcast_pushes_total",
    "liveactivity_broadcast_latency_seconds_bucket",
    "liveactivity_channels",
    "liveactivity_channel_requests_total",
    "liveactivity_channel_subscriptions",
]

# Grafana unit ids (packages/grafana-data/src/valueFormats/categories.ts) that a
# dashboard like this one can use; a typo here would silently show raw numbers.
KNOWN_UNITS = {
    "none", "short", "string", "locale", "sci", "percent", "percentunit",
    "bits", "bytes", "kbytes", "mbytes", "gbytes", "decbits", "decbytes", "deckbytes",
    "decmbytes", "decgbytes", "Bps", "KBs", "MBs", "bps", "pps",
    "ns", "µs", "ms", "s", "m", "h", "d", "dtdurationms", "dtdurations", "dthms",
    "dateTimeAsIso", "dateTimeFromNow", "hertz",
    "cps", "ops", "reqps", "rps", "wps", "iops", "cpm", "opm", "rpm", "wpm",
}

# What a query's values measure, and the units that can show it (a subset of KNOWN_UNITS).
UNITS_FOR_KIND = {
    "rate": {"cps", "ops", "reqps", "rps", "wps", "iops", "pps", "Bps", "KBs", "MBs", "bps", "hertz"},
    "time": {"ns", "µs", "ms", "s", "m", "h", "d", "dtdurationms", "dtdurations", "dthms"},
    "bytes": {"bits", "bytes", "kbytes", "mbytes", "gbytes", "decbits", "decbytes", "deckbytes",
              "decmbytes", "decgbytes"},
    "count": {"none", "short", "locale", "sci"},
}

HTTP_TIMEOUT_SECONDS = 15


@dataclass
class CheckResult:
    """One named check and its outcome; `detail` says what failed (or a note)."""

    name: str
    passed: bool
    detail: str = ""


def _ok(name: str, detail: str = "") -> CheckResult:
    return CheckResult(name, True, detail)


def _fail(name: str, detail: str) -> CheckResult:
    return CheckResult(name, False, detail)


# --------------------------------------------------------------------------- dashboard


def load_dashboard(path: Path = DASHBOARD) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def all_panels(dashboard: dict) -> list[dict]:
    """Every panel, rows included, with the panels nested in collapsed rows."""
    out = []
    for panel in dashboard.get("panels", []):
        out.append(panel)
        out.extend(panel.get("panels", []) or [])
    return out


def panel_queries(dashboard: dict) -> list[tuple[str, str, str]]:
    """(panel title, refId, expr) for every target of every non-row panel."""
    out = []
    for panel in all_panels(dashboard):
        if panel.get("type") == "row":
            continue
        for target in panel.get("targets", []) or []:
            out.append((panel.get("title", f"panel {panel.get('id')}"),
                        target.get("refId", "?"), target.get("expr", "")))
    return out


def prometheus_annotations(dashboard: dict) -> list[dict]:
    """The annotations that query Prometheus (those with an expr)."""
    return [a for a in dashboard.get("annotations", {}).get("list", []) if a.get("expr")]


def annotation_queries(dashboard: dict) -> list[tuple[str, str]]:
    """(annotation name, expr) for the Prometheus annotations."""
    return [(a.get("name", "annotation"), a["expr"]) for a in prometheus_annotations(dashboard)]


def variable(dashboard: dict, name: str) -> dict | None:
    for v in dashboard.get("templating", {}).get("list", []):
        if v.get("name") == name:
            return v
    return None


def variable_query(v: dict) -> str:
    query = v.get("query")
    if isinstance(query, dict):
        return query.get("query", "")
    return query or ""


_SELECTOR = re.compile(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}")
_BARE_METRIC = re.compile(r"\b(liveactivity_[a-zA-Z0-9_]+|process_[a-zA-Z0-9_]+|up)\b(?!\s*\{)")
_RANGE = re.compile(r"\[([^\]]+)\]")


def _expr_problems(expr: str) -> list[str]:
    problems = []
    if not expr.strip():
        return ["empty expr"]
    selectors = _SELECTOR.findall(expr)
    if not selectors:
        problems.append("no metric selector")
    for metric, matchers in selectors:
        if JOB_FILTER not in matchers:
            problems.append(f"{metric} is not filtered by {JOB_FILTER}")
        if INSTANCE_FILTER not in matchers:
            problems.append(f"{metric} is not filtered by {INSTANCE_FILTER}")
    # Label names inside braces were removed by the selector regex; what is left must
    # not name a metric without a selector (it would escape the job filter).
    stripped = _SELECTOR.sub("SELECTOR", expr)
    stripped = re.sub(r'"[^"]*"', '""', stripped)
    for bare in _BARE_METRIC.findall(stripped):
        problems.append(f"{bare} has no label selector (and so no job filter)")
    for window in _RANGE.findall(expr):
        if not window.strip().startswith("$"):
            problems.append(f"hard-coded range [{window}]: use $__rate_interval")
    return problems


def query_kind(expr: str) -> str | None:
    """What a panel query's values measure, read from its shape: "rate" (per second), "time"
    (seconds), "bytes" or "count"; None for a shape this check does not judge (a ratio or
    share, a rate of seconds, which is a share of a core, a timestamp)."""
    if "/" in expr:
        return None
    metrics = [m for m, _ in _SELECTOR.findall(expr)]
    if re.match(r"\s*histogram_quantile\(", expr):
        if all(m.endswith("_seconds_bucket") for m in metrics):
            return "time"
        if all(m.endswith("_bytes_bucket") for m in metrics):
            return "bytes"
        return None
    if re.search(r"\btime\(\)\s*-", expr):
        return "time"
    if re.search(r"\b(?:rate|irate)\(", expr):
        return None if any(m.endswith("_seconds_total") for m in metrics) else "rate"
    if "[" in expr:
        return None  # increase(), changes(), *_over_time(): judged by what they are used for
    if metrics and all(m.endswith("_bytes") for m in metrics):
        return "bytes"
    if any(m.endswith("_seconds") for m in metrics):
        return None
    return "count"


def _field_config(panel: dict) -> tuple[dict, list]:
    config = panel.get("fieldConfig") or {}
    return config.get("defaults") or {}, config.get("overrides") or []


def series_units(panel: dict) -> tuple[dict[str, tuple[str | None, str]], list[str]]:
    """({refId: (unit, axis side)}, problems): how Grafana draws each query's series, from the
    panel's field defaults and its overrides by query (`byFrameRefID`). The side is "left"
    (Grafana's auto placement draws the first axis there), "right" or "hidden"."""
    defaults, overrides = _field_config(panel)
    default_side = ((defaults.get("custom") or {}).get("axisPlacement") or "auto")
    out, problems = {}, []
    for target in panel.get("targets") or []:
        unit, side = defaults.get("unit"), default_side
        for override in overrides:
            matcher = override.get("matcher") or {}
            if matcher.get("id") != "byFrameRefID":
                problems.append(f"override matcher {matcher.get('id')!r}: this check reads only byFrameRefID")
                continue
            if matcher.get("options") != target.get("refId"):
                continue
            for prop in override.get("properties") or []:
                if prop.get("id") == "unit":
                    unit = prop.get("value")
                elif prop.get("id") == "custom.axisPlacement":
                    side = prop.get("value")
        out[target.get("refId")] = (unit, "left" if side in ("auto", "left") else side)
    return out, sorted(set(problems))


def unit_problems(panel: dict) -> list[str]:
    """A query whose unit does not fit what it measures (a rate shown as a count, a p90 in
    seconds shown as a count), or two units sharing one axis."""
    title = panel.get("title") or f"panel {panel.get('id')}"
    units, problems = series_units(panel)
    problems = [f"{title!r}: {p}" for p in problems]
    for target in panel.get("targets") or []:
        ref = target.get("refId")
        unit = units.get(ref, (None, ""))[0]
        kind = query_kind(target.get("expr", ""))
        if unit is not None and unit not in KNOWN_UNITS:
            problems.append(f"{title!r} {ref}: unknown unit {unit!r}")
        elif kind is not None and unit not in UNITS_FOR_KIND[kind]:
            problems.append(f"{title!r} {ref}: a {kind} shown in {unit!r}")
    sides: dict[str, set] = {}
    for unit, side in units.values():
        sides.setdefault(side, set()).add(unit)
    for side, on_it in sorted(sides.items()):
        if len(on_it) > 1 and side != "hidden":
            problems.append(f"{title!r}: units {sorted(on_it, key=str)} share the {side} axis")
    return problems


def _overlaps(a: dict, b: dict) -> bool:
    return (a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"]
            and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"])


def check_dashboard_structure(dashboard: dict) -> list[CheckResult]:
    results = []

    def check(name: str, problems: list[str]) -> None:
        results.append(_fail(f"dashboard: {name}", "; ".join(problems)) if problems
                       else _ok(f"dashboard: {name}"))

    check("uid is stable", [] if dashboard.get("uid") == DASHBOARD_UID
          else [f"uid is {dashboard.get('uid')!r}, expected {DASHBOARD_UID!r}"])
    meta = []
    if not dashboard.get("title"):
        meta.append("no title")
    if not isinstance(dashboard.get("schemaVersion"), int) or dashboard["schemaVersion"] < 38:
        meta.append(f"schemaVersion {dashboard.get('schemaVersion')!r} < 38")
    for key in ("__inputs", "__requires"):
        if key in dashboard:
            meta.append(f"{key} present (export 'for sharing externally' off)")
    if dashboard.get("id") is not None:
        meta.append("id must be null so that provisioning assigns one")
    check("title, schemaVersion >= 38, no __inputs, null id", meta)

    ds = variable(dashboard, "datasource")
    ds_problems = []
    if ds is None:
        ds_problems.append("no variable named datasource")
    elif ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        ds_problems.append(f"type={ds.get('type')!r} query={ds.get('query')!r}, "
                           "expected type datasource, query prometheus")
    check("datasource variable", ds_problems)

    def query_variable_problems(name, expected_query):
        var = variable(dashboard, name)
        if var is None:
            return var, [f"no variable named {name}"]
        problems = []
        if var.get("type") != "query":
            problems.append(f"type {var.get('type')!r}, expected query")
        if var.get("datasource") != DATASOURCE_REF:
            problems.append(f"datasource {var.get('datasource')!r}, expected {DATASOURCE_REF}")
        if variable_query(var).replace(" ", "") != expected_query.replace(" ", ""):
            problems.append(f"query {variable_query(var)!r}, expected {expected_query!r}")
        return var, problems

    job, job_problems = query_variable_problems("job", JOB_VARIABLE_QUERY)
    if job is not None and job.get("includeAll") and job.get("allValue"):
        # A custom all value such as .* would also match other jobs' process_* series.
        job_problems.append(f"allValue {job.get('allValue')!r}: leave it unset")
    check("job variable", job_problems)

    instance, instance_problems = query_variable_problems("instance", INSTANCE_VARIABLE_QUERY)
    # All is every instance of the selected jobs (`.*` beside `job=~"$job"`), not only those
    # with a build_info series in the range: a monitor down the whole range still shows in up.
    if instance is not None and (not (instance.get("multi") and instance.get("includeAll")) or instance.get("allValue") != ".*"):
        instance_problems.append("must be multi-select with All, its allValue .*")
    check("instance variable (depends on job)", instance_problems)

    panels = all_panels(dashboard)
    ids = [p.get("id") for p in panels]
    dupes = sorted({i for i in ids if ids.count(i) > 1}, key=str)
    id_problems = [f"duplicate ids {dupes}"] if dupes else []
    id_problems += [f"panel {p.get('title')!r} has id {p.get('id')!r}"
                    for p in panels if not isinstance(p.get("id"), int)]
    check(f"{len(panels)} panel ids unique", id_problems)

    grid_problems = []
    boxes = []
    for p in panels:
        g = p.get("gridPos") or {}
        if not all(isinstance(g.get(k), int) for k in ("x", "y", "w", "h")):
            grid_problems.append(f"{p.get('title')!r}: gridPos {g}")
            continue
        if g["x"] < 0 or g["w"] < 1 or g["h"] < 1 or g["x"] + g["w"] > 24:
            grid_problems.append(f"{p.get('title')!r}: x+w = {g['x'] + g['w']} (> 24) or bad size")
        boxes.append((p.get("title"), g))
    for i, (ta, a) in enumerate(boxes):
        for tb, b in boxes[i + 1:]:
            if _overlaps(a, b):
                grid_problems.append(f"{ta!r} overlaps {tb!r}")
    check("gridPos inside 24 columns, no overlaps", grid_problems)

    panel_problems, unit_issues = [], []
    titles = [p.get("title") for p in panels if p.get("type") != "row"]
    for p in panels:
        if p.get("type") == "row":
            continue
        title = p.get("title") or f"panel {p.get('id')}"
        if not p.get("title"):
            panel_problems.append(f"panel {p.get('id')} has no title")
        elif titles.count(title) > 1:
            panel_problems.append(f"{title!r}: title used twice")
        if p.get("datasource") != DATASOURCE_REF:
            panel_problems.append(f"{title!r}: datasource {p.get('datasource')!r}")
        unit = ((p.get("fieldConfig") or {}).get("defaults") or {}).get("unit")
        if not unit:
            panel_problems.append(f"{title!r}: no fieldConfig.defaults.unit")
        elif unit not in KNOWN_UNITS:
            panel_problems.append(f"{title!r}: unknown unit {unit!r}")
        targets = p.get("targets") or []
        if not targets:
            panel_problems.append(f"{title!r}: no targets")
        ref_ids = [t.get("refId") for t in targets]
        if len(set(ref_ids)) != len(ref_ids) or None in ref_ids:
            panel_problems.append(f"{title!r}: refIds {ref_ids} not unique")
        unit_issues += unit_problems(p)
        for t in targets:
            if "datasource" in t and t["datasource"] != DATASOURCE_REF:
                panel_problems.append(f"{title!r} {t.get('refId')}: datasource {t['datasource']!r}")
            for problem in _expr_problems(t.get("expr", "")):
                panel_problems.append(f"{title!r} {t.get('refId')}: {problem}")
    for name, expr in annotation_queries(dashboard):
        for problem in _expr_problems(expr):
            panel_problems.append(f"annotation {name!r}: {problem}")
    check("every panel: title, datasource variable, targets with job-filtered expr, unit",
          panel_problems)
    check("every query's unit fits what it measures (per second, seconds, bytes, a count); "
          "one unit per axis", unit_issues)

    # No hard-coded datasource uid anywhere (only the variable or Grafana's built-in).
    uid_problems = []

    def walk(node, where):
        if isinstance(node, dict):
            ref = node.get("datasource")
            if isinstance(ref, str) and ref not in ("${datasource}", "$datasource"):
                uid_problems.append(f"{where}: datasource {ref!r}")
            if isinstance(ref, dict) and ref.get("uid") not in ("${datasource}", "-- Grafana --"):
                uid_problems.append(f"{where}: datasource uid {ref.get('uid')!r}")
            for k, v in node.items():
                walk(v, f"{where}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{where}[{i}]")

    walk(dashboard, "$")
    check("no hard-coded datasource uid", uid_problems)

    exprs = " ".join(e for _, _, e in panel_queries(dashboard))
    missing = [m for m in EXPECTED_METRICS if not re.search(rf"\b{re.escape(m)}\b", exprs)]
    check(f"all {len(EXPECTED_METRICS)} metric families of DESIGN.md section 5 charted",
          [f"not charted: {', '.join(missing)}"] if missing else [])

    limit_problems = ["no panel on liveactivity_push_payload_bytes has a threshold step at "
                      f"{PAYLOAD_LIMIT_BYTES}"]
    for p in panels:
        if any("liveactivity_push_payload_bytes" in t.get("expr", "") for t in p.get("targets") or []):
            steps = (((p.get("fieldConfig") or {}).get("defaults") or {})
                     .get("thresholds") or {}).get("steps") or []
            if any(s.get("value") == PAYLOAD_LIMIT_BYTES for s in steps):
                limit_problems = []
    check(f"payload size shows the {PAYLOAD_LIMIT_BYTES}-byte limit", limit_problems)

    # The live channels panel draws APNs' channel limit as a line, on an axis that reaches it.
    channel_problems = ["no panel on liveactivity_channels draws a threshold line at "
                        f"{CHANNEL_LIMIT}"]
    for p in panels:
        if any(re.search(r"\bliveactivity_channels\b", t.get("expr", "")) for t in p.get("targets") or []):
            defaults = (p.get("fieldConfig") or {}).get("defaults") or {}
            custom = defaults.get("custom") or {}
            steps = (defaults.get("thresholds") or {}).get("steps") or []
            if (any(s.get("value") == CHANNEL_LIMIT for s in steps)
                    and "line" in (custom.get("thresholdsStyle") or {}).get("mode", "")
                    and (custom.get("axisSoftMax") or defaults.get("max") or 0) >= CHANNEL_LIMIT):
                channel_problems = []
    check(f"live channels show the {CHANNEL_LIMIT:,} limit", channel_problems)
    return results


def check_provisioning() -> list[CheckResult]:
    """Light checks without a YAML parser: the keys a stock Grafana needs are there."""
    results = []
    ds = DATASOURCE_PROVISIONING.read_text(encoding="utf-8")
    problems = [f"missing {needle!r}" for needle in
                ("apiVersion: 1", "name: Prometheus", "type: prometheus",
                 "url: http://localhost:9090")
                if needle not in ds]
    if re.search(r"^\s*uid:", ds, re.M):
        problems.append("the datasource sets a uid; the dashboard must not depend on one")
    results.append(_fail("provisioning: datasource", "; ".join(problems)) if problems
                   else _ok("provisioning: datasource"))

    prov = DASHBOARD_PROVISIONING.read_text(encoding="utf-8")
    match = re.search(r"^\s*path:\s*(\S+)", prov, re.M)
    problems = [f"missing {needle!r}" for needle in ("apiVersion: 1", "type: file")
                if needle not in prov]
    if not match:
        problems.append("no options.path")
    elif match.group(1) not in README.read_text(encoding="utf-8"):
        problems.append(f"path {match.group(1)} is not documented in Grafana/README.md")
    results.append(_fail("provisioning: dashboards file provider", "; ".join(problems))
                   if problems else _ok("provisioning: dashboards file provider"))
    return results


# --------------------------------------------------------------------------- rules


@dataclass
class Rule:
    """An alerting or recording rule as read from a rules file."""

    name: str
    expr: str


def parse_rules(path: Path = ALERTS) -> list[Rule]:
    """Rules (`- alert:` or `- record:` with `expr:`) from a Prometheus rules file.

    A small reader for the YAML subset that rule files use (plain, quoted or block
    scalars), so that this script needs nothing beyond the standard library;
    promtool has already validated the file as real YAML.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    rules: list[Rule] = []
    name = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^\s*-\s+(alert|record):\s*(.+?)\s*$", line)
        if m:
            name = _scalar(m.group(2))
        m = re.match(r"^(\s*)expr:\s*(.*?)\s*$", line)
        if m and name is not None:
            indent, value = len(m.group(1)), m.group(2)
            if value[:1] in ("|", ">"):
                block = []
                i += 1
                while i < len(lines) and (not lines[i].strip()
                                          or len(lines[i]) - len(lines[i].lstrip()) > indent):
                    block.append(lines[i].rstrip())
                    i += 1
                # Block scalars drop the indentation of their first line from every line.
                first = next((b for b in block if b.strip()), "")
                cut = len(first) - len(first.lstrip())
                joiner = "\n" if value[0] == "|" else " "
                rules.append(Rule(name, joiner.join(b[cut:] for b in block).strip()))
                name = None
                continue
            rules.append(Rule(name, _scalar(value)))
            name = None
        i += 1
    return rules


def _scalar(value: str) -> str:
    if value.startswith('"'):
        return json.loads(value)
    if value.startswith("'"):
        return value[1:-1].replace("''", "'")
    return value


def alert_test_coverage(alerts_path: Path = ALERTS,
                        tests_path: Path = ALERTS_TEST) -> list[CheckResult]:
    """Every alert has a unit-test case where it fires and one where it does not."""
    alerts = [r.name for r in parse_rules(alerts_path)]
    firing: set[str] = set()
    silent: set[str] = set()
    current = None
    for line in tests_path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\s*(?:-\s+)?alertname:\s*(\S+)", line)
        if m:
            current = _scalar(m.group(1))
            continue
        m = re.match(r"^\s*exp_alerts:\s*(.*?)\s*$", line)
        if m and current:
            (silent if m.group(1) == "[]" else firing).add(current)
            current = None
    problems = []
    for a in alerts:
        if a not in firing:
            problems.append(f"{a} has no case where it fires")
        if a not in silent:
            problems.append(f"{a} has no case where it does not fire")
    name = f"alerts_test.yml covers all {len(alerts)} alerts firing and not firing"
    if not alerts:
        return [_fail(name, f"no alert found in {alerts_path}")]
    return [_fail(name, "; ".join(problems)) if problems else _ok(name)]


def _promtool(args: list[str], name: str) -> CheckResult:
    promtool = shutil.which("promtool")
    if promtool is None:
        return _fail(name, "promtool not found on PATH (apt-get install prometheus)")
    proc = subprocess.run([promtool, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    output = (proc.stdout + proc.stderr).strip()
    for line in output.splitlines():
        print(f"    | {line}")
    if proc.returncode != 0:
        return _fail(name, f"exit status {proc.returncode}")
    return _ok(name)


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def check_prometheus_files() -> list[CheckResult]:
    rel = _rel
    results = [
        _promtool(["check", "config", rel(PROMETHEUS_CONFIG)],
                  f"promtool check config {rel(PROMETHEUS_CONFIG)}"),
        _promtool(["check", "rules", rel(ALERTS)], f"promtool check rules {rel(ALERTS)}"),
        _promtool(["test", "rules", rel(ALERTS_TEST)], f"promtool test rules {rel(ALERTS_TEST)}"),
    ]
    results += alert_test_coverage()
    rules = parse_rules()
    problems = []
    text = ALERTS.read_text(encoding="utf-8")
    for block in re.split(r"\n\s*-\s+alert:", text)[1:]:
        alert = block.split("\n", 1)[0].strip()
        for needle, what in (("for:", "a for: duration"), ("severity:", "a severity label"),
                             ("summary:", "a summary"), ("description:", "a description")):
            if needle not in block:
                problems.append(f"{alert} lacks {what}")
        if "{{ $labels" not in block and "{{ $value" not in block:
            problems.append(f"{alert} annotations use neither $labels nor $value")
    if len(rules) != text.count("- alert:"):
        problems.append(f"read {len(rules)} exprs for {text.count('- alert:')} alerts")
    results.append(_fail("alerts have for, severity, summary and description", "; ".join(problems))
                   if problems else _ok("alerts have for, severity, summary and description"))
    return results


# --------------------------------------------------------------------------- Grafana variables


def parse_duration(text: str) -> float:
    """Seconds in a Grafana/Prometheus duration: `90s`, `1m`, `1h30m`, `3h`, `500ms`."""
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)", text.strip())
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        raise ValueError(f"not a duration: {text!r}")
    scale = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    return sum(float(n) * scale[u] for n, u in parts)


def _regex_escape(value: str) -> str:
    # Grafana's prometheusSpecialRegexEscape: escape regex metacharacters for a value
    # that lands inside a double-quoted PromQL string used as a regex (=~).
    value = value.replace("\\", "\\\\\\\\")
    return re.sub(r"[$^*{}\[\]'+?.()|]", lambda m: "\\\\" + m.group(0), value)


def _plain_escape(value: str) -> str:
    # Grafana's prometheusRegularEscape, for a single-valued variable.
    return value.replace("\\", "\\\\").replace("'", "\\\\'")


def format_variable(values: list[str], multi: bool, include_all: bool, fmt: str | None) -> str:
    """A variable's value as Grafana's Prometheus datasource interpolates it."""
    if fmt in (None, ""):
        if not multi and not include_all:
            return _plain_escape(values[0])
        escaped = [_regex_escape(v) for v in values]
        return escaped[0] if len(escaped) == 1 else "(" + "|".join(escaped) + ")"
    if fmt == "raw":
        return ",".join(values)
    if fmt == "csv":
        return ",".join(values)
    if fmt == "pipe":
        return "|".join(values)
    if fmt == "regex":
        # Grafana's regexEscape (kbn), not Python's re.escape, which also escapes "-".
        escaped = [re.sub(r"[\\^$*+?.()|\[\]{}/]", lambda m: "\\" + m.group(0), v) for v in values]
        return escaped[0] if len(escaped) == 1 else "(" + "|".join(escaped) + ")"
    raise ValueError(f"variable format {fmt!r} not supported by this check")


# Grafana's template variable syntax: $var, [[var]] / [[var:fmt]], ${var} / ${var:fmt}.
_VARIABLE = re.compile(r"\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?:\.([^:^}]+))?(?::([^}]+))?\}")


@dataclass
class GrafanaContext:
    """What Grafana knows when it sends a panel query: variables, interval, range."""

    job_values: list[str]
    job_multi: bool = True
    job_include_all: bool = True
    # None: the instance variable is All, i.e. every instance of the selected jobs.
    instance_values: list[str] | None = None
    instance_multi: bool = True
    instance_include_all: bool = True
    scrape_interval_s: int = 15
    interval_s: int = 15
    range_s: int = 3 * 3600
    # Set where Grafana computes $__rate_interval otherwise (annotations: annotation_context).
    rate_interval_fixed_s: int | None = None

    @property
    def rate_interval_s(self) -> int:
        if self.rate_interval_fixed_s is not None:
            return self.rate_interval_fixed_s
        # Grafana: $__rate_interval = max($__interval + scrape interval, 4 * scrape interval)
        return max(self.interval_s + self.scrape_interval_s, 4 * self.scrape_interval_s)

    def builtins(self) -> dict[str, str]:
        return {
            "__rate_interval": f"{self.rate_interval_s}s",
            "__rate_interval_ms": str(self.rate_interval_s * 1000),
            "__interval": f"{self.interval_s}s",
            "__interval_ms": str(self.interval_s * 1000),
            "__range": f"{self.range_s}s",
            "__range_s": str(self.range_s),
            "__range_ms": str(self.range_s * 1000),
        }

    def interpolate(self, expr: str) -> str:
        builtins = self.builtins()

        def replace(m: re.Match) -> str:
            name = m.group(1) or m.group(2) or m.group(4)
            fmt = m.group(3) or m.group(6)
            if name in builtins:
                return builtins[name]
            if name == "job":
                return format_variable(self.job_values, self.job_multi, self.job_include_all, fmt)
            if name == "instance":
                if self.instance_values is None:
                    raise ValueError("$instance used but its values were not resolved")
                return format_variable(self.instance_values, self.instance_multi,
                                       self.instance_include_all, fmt)
            raise ValueError(f"unknown template variable ${name}")

        return _VARIABLE.sub(replace, expr)


# --------------------------------------------------------------------------- Grafana annotations

# A Prometheus annotation is a range query over the dashboard's range, sent without
# maxDataPoints or intervalMs, so that Grafana's backend takes its defaults (100 points, 1 s);
# the annotation's "step" is a minimum (Grafana's default 60s).
ANNOTATION_MAX_POINTS = 100
ANNOTATION_DEFAULT_STEP = "60s"
ANNOTATION_REQUEST_INTERVAL_S = 1
# Grafana rounds a computed step to a round one: (up to this many seconds, the step).
_ROUND_STEPS = [(1.5, 1), (3.5, 2), (7.5, 5), (12.5, 10), (17.5, 15), (25, 20), (45, 30), (90, 60),
                (210, 120), (450, 300), (750, 600), (1050, 900), (1500, 1200), (2700, 1800),
                (5400, 3600), (9000, 7200), (16200, 10800), (32400, 21600), (86400, 43200),
                (604800, 86400), (1814400, 604800), (3628800, 2592000)]


def round_step(seconds: float) -> int:
    """The round step Grafana's backend makes of a computed interval (pkg/promlib)."""
    return next((step for bound, step in _ROUND_STEPS if seconds <= bound), 31536000)


def annotation_step_s(annotation: dict, range_s: int) -> int:
    """The step of an annotation's range query over a dashboard range of `range_s` seconds:
    range / 100 points, not below the annotation's min step, rounded."""
    min_step = parse_duration(annotation.get("step") or ANNOTATION_DEFAULT_STEP)
    return round_step(max(range_s / ANNOTATION_MAX_POINTS, min_step))


def annotation_context(ctx: GrafanaContext, annotation: dict, range_s: int | None = None) -> GrafanaContext:
    """`ctx` as Grafana's backend interpolates an annotation's query: $__interval is the query's
    step, and $__rate_interval is computed from the annotation's min step and the request's
    1 s interval (max(1 s + min step, 4 × min step)), not from the scrape interval."""
    range_s = range_s or ctx.range_s
    min_step = int(parse_duration(annotation.get("step") or ANNOTATION_DEFAULT_STEP))
    return GrafanaContext(
        job_values=ctx.job_values, job_multi=ctx.job_multi, job_include_all=ctx.job_include_all,
        instance_values=ctx.instance_values, instance_multi=ctx.instance_multi,
        instance_include_all=ctx.instance_include_all, scrape_interval_s=ctx.scrape_interval_s,
        interval_s=annotation_step_s(annotation, range_s), range_s=range_s,
        rate_interval_fixed_s=max(ANNOTATION_REQUEST_INTERVAL_S + min_step, 4 * min_step))


def _render_legend(template: str, labels: dict) -> str:
    return re.sub(r"\{\{\s*(.+?)\s*\}\}", lambda m: labels.get(m.group(1), ""), template or "")


def annotation_events(prometheus_url: str, annotation: dict, ctx: GrafanaContext,
                      last_step: float) -> list[dict]:
    """The events Grafana draws for a Prometheus annotation (packages/grafana-prometheus,
    annotations.ts) in a view of `ctx.range_s` seconds whose last step is at `last_step`:
    Grafana aligns the range to multiples of the step (last_step = floor(now / step) * step in
    UTC), and `ctx` should come from annotation_context. Every point with a value above 0 is
    active; with useValueForTime the value is the event's time, in ms. Active points at most a
    step apart make one event, a region from the first to the last. Returns
    [{time, time_end (ms), labels, title, text}]; raises RuntimeError if the query fails."""
    step = ctx.interval_s
    start = last_step - (ctx.range_s // step) * step
    body = _api(prometheus_url, "/api/v1/query_range",
                {"query": ctx.interpolate(annotation["expr"]), "start": f"{start:.3f}",
                 "end": f"{last_step:.3f}", "step": str(step)}, post=True)
    if body.get("status") != "success":
        raise RuntimeError(f"{body.get('errorType')}: {body.get('error')}")
    events = []
    for series in body.get("data", {}).get("result", []):
        labels = series.get("metric", {})
        stamps = []
        for t, v in series.get("values", []):
            value = float(v)
            if math.isnan(value):
                continue  # Grafana would make an event at no time
            if annotation.get("useValueForTime"):
                stamps.append(math.floor(value))
            elif value > 0:
                stamps.append(math.floor(float(t) * 1000))
        event = None
        for stamp in stamps:
            if event is not None and event["time_end"] + step * 1000 >= stamp:
                event["time_end"] = stamp
                continue
            event = {"time": stamp, "time_end": stamp, "labels": labels,
                     "title": _render_legend(annotation.get("titleFormat", ""), labels),
                     "text": _render_legend(annotation.get("textFormat", ""), labels)}
            events.append(event)
    return events


# --------------------------------------------------------------------------- Prometheus API


def _api(prometheus_url: str, path: str, params: dict | list | None = None,
         post: bool = False) -> dict:
    url = prometheus_url.rstrip("/") + path
    data = urllib.parse.urlencode(params or {}, doseq=True)
    if post:
        request = urllib.request.Request(
            url, data=data.encode(), headers={"Content-Type": "application/x-www-form-urlencoded"})
    else:
        request = urllib.request.Request(url + ("?" + data if data else ""))
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_SECONDS) as response:
            return json.load(response)
    except urllib.error.HTTPError as e:
        # Prometheus answers 400 with a JSON body for a bad expression.
        try:
            return json.load(e)
        except ValueError:
            return {"status": "error", "error": f"HTTP {e.code}"}


def query(prometheus_url: str, expr: str, at: float | None = None) -> dict:
    """POST /api/v1/query: an instant query at `at` (Unix seconds), else at the server's now."""
    params = {"query": expr} if at is None else {"query": expr, "time": f"{at:.3f}"}
    return _api(prometheus_url, "/api/v1/query", params, post=True)


def _result_summary(body: dict) -> tuple[int, bool]:
    """(number of samples, whether every value is NaN) of a successful query."""
    data = body.get("data", {})
    kind, result = data.get("resultType"), data.get("result")
    if kind in ("scalar", "string"):
        values = [result[1]]
    elif kind == "vector":
        values = [r["value"][1] for r in result]
    elif kind == "matrix":
        values = [v[1] for r in result for v in r["values"]]
    else:
        values = []
    all_nan = bool(values) and all(str(v) == "NaN" for v in values)
    return len(values), all_nan


def job_values(prometheus_url: str) -> list[str]:
    """What `label_values(liveactivity_build_info, job)` returns in Grafana."""
    body = _api(prometheus_url, "/api/v1/label/job/values",
                {"match[]": "liveactivity_build_info"})
    if body.get("status") != "success":
        raise RuntimeError(f"label values query failed: {body.get('error')}")
    return sorted(body.get("data") or [])


def instance_values(prometheus_url: str, jobs: list[str]) -> list[str]:
    """What `label_values(liveactivity_build_info{job=~"$job"}, instance)` returns in Grafana."""
    matcher = "liveactivity_build_info{job=~\"" + format_variable(jobs, True, True, None) + "\"}"
    body = _api(prometheus_url, "/api/v1/label/instance/values", {"match[]": matcher})
    if body.get("status") != "success":
        raise RuntimeError(f"label values query failed: {body.get('error')}")
    return sorted(body.get("data") or [])


def scrape_interval_of(prometheus_url: str, jobs: list[str]) -> int | None:
    """The scrape interval of the first active target of `jobs`, if Prometheus says."""
    body = _api(prometheus_url, "/api/v1/targets", {"state": "active"})
    for target in (body.get("data") or {}).get("activeTargets", []):
        if target.get("labels", {}).get("job") in jobs and target.get("scrapeInterval"):
            return int(parse_duration(target["scrapeInterval"]))
    return None


def _provisioned_time_interval() -> int:
    m = re.search(r"^\s*timeInterval:\s*(\S+)", DATASOURCE_PROVISIONING.read_text(encoding="utf-8"),
                  re.M)
    return int(parse_duration(m.group(1))) if m else 15


def _dashboard_range_s(dashboard: dict) -> int:
    m = re.fullmatch(r"now-(\S+)", dashboard.get("time", {}).get("from", ""))
    return int(parse_duration(m.group(1))) if m else 3 * 3600


def check_queries(prometheus_url: str, job: str | list[str] | None = None, *,
                  instance: str | list[str] | None = None,
                  scrape_interval: str | None = None, interval: str | None = None,
                  time_range: str | None = None, dashboard_path: Path = DASHBOARD,
                  alerts_path: Path = ALERTS, verbose: bool = True) -> list[CheckResult]:
    """Send every dashboard query to a real Prometheus, as Grafana would, and check it.

    `job`: the job value(s) selected in the dashboard; None selects "All", i.e. every
    value of `label_values(liveactivity_build_info, job)`. `scrape_interval` defaults
    to the scrape interval Prometheus reports for that job's targets (as the
    provisioned datasource's timeInterval mirrors it), else the provisioned value;
    `interval` ($__interval) to the scrape interval (Grafana's minimum for panels of
    a few hours); `time_range` ($__range) to the dashboard's default time range.

    Panel and annotation queries must succeed and return data; the job variable must
    resolve to at least one value; alert expressions must succeed (no data needed).
    Returns one CheckResult per query; none raises for a failed check.
    """
    dashboard = json.loads(Path(dashboard_path).read_text(encoding="utf-8"))
    results: list[CheckResult] = []

    try:
        available = job_values(prometheus_url)
    except (OSError, RuntimeError) as e:
        return [_fail(f"Prometheus at {prometheus_url} answers", str(e))]
    jv = variable(dashboard, "job") or {}
    if job is None:
        selected = available
        name = f"job variable ({variable_query(jv)}) resolves to {available}"
        results.append(_ok(name) if available else
                       _fail(name, "no series liveactivity_build_info: has the monitor been scraped?"))
    else:
        selected = [job] if isinstance(job, str) else list(job)
        missing = [j for j in selected if j not in available]
        name = f"job variable offers {selected}"
        results.append(_fail(name, f"label_values(liveactivity_build_info, job) = {available}")
                       if missing else _ok(name))
    if not selected:
        return results

    iv = variable(dashboard, "instance") or {}
    try:
        offered = instance_values(prometheus_url, selected)
    except (OSError, RuntimeError) as e:
        return results + [_fail(f"Prometheus at {prometheus_url} answers", str(e))]
    if instance is None:
        instances = offered
        name = f"instance variable resolves to {offered}"
        results.append(_ok(name) if offered else _fail(name, "no instance for the selected jobs"))
    else:
        instances = [instance] if isinstance(instance, str) else list(instance)
        name = f"instance variable offers {instances}"
        results.append(_fail(name, f"offered {offered}") if set(instances) - set(offered) else _ok(name))
    if not instances:
        return results

    if scrape_interval is not None:
        scrape_s = int(parse_duration(scrape_interval))
    else:
        try:
            scrape_s = scrape_interval_of(prometheus_url, selected) or _provisioned_time_interval()
        except OSError:
            scrape_s = _provisioned_time_interval()
    ctx = GrafanaContext(
        job_values=selected,
        job_multi=bool(jv.get("multi", True)),
        job_include_all=bool(jv.get("includeAll", True)),
        instance_values=instances,
        instance_multi=bool(iv.get("multi", True)),
        instance_include_all=bool(iv.get("includeAll", True)),
        scrape_interval_s=scrape_s,
        interval_s=int(parse_duration(interval)) if interval else scrape_s,
        range_s=int(parse_duration(time_range)) if time_range else _dashboard_range_s(dashboard),
    )
    if verbose:
        print(f"  Grafana context: job={ctx.interpolate('$job')} instance={ctx.interpolate('$instance')} "
              f"$__rate_interval={ctx.builtins()['__rate_interval']} "
              f"$__interval={ctx.builtins()['__interval']} $__range={ctx.builtins()['__range']}")

    def run(label: str, expr: str, need_data: bool) -> None:
        try:
            promql = ctx.interpolate(expr)
        except ValueError as e:
            results.append(_fail(label, str(e)))
            return
        try:
            body = query(prometheus_url, promql)
        except OSError as e:
            results.append(_fail(label, f"{e} for {promql}"))
            return
        if body.get("status") != "success":
            results.append(_fail(label, f"{body.get('errorType')}: {body.get('error')} in {promql}"))
            return
        count, all_nan = _result_summary(body)
        if need_data and count == 0:
            results.append(_fail(label, f"returned no data: {promql}"))
        elif need_data and all_nan:
            results.append(_ok(label, f"note: only NaN (no events in {ctx.rate_interval_s}s)"))
        else:
            results.append(_ok(label))

    for title, ref_id, expr in panel_queries(dashboard):
        run(f"panel {title!r} {ref_id} returns data", expr, need_data=True)
    for annotation in prometheus_annotations(dashboard):
        # Interpolated as Grafana's backend does for an annotation over the dashboard's range.
        actx = annotation_context(ctx, annotation)
        name = annotation.get("name", "annotation")
        try:
            body = query(prometheus_url, actx.interpolate(annotation["expr"]))
            ok = body.get("status") == "success"
            detail = "" if ok else f"{body.get('errorType')}: {body.get('error')}"
        except (OSError, ValueError) as e:
            ok, detail = False, str(e)
        results.append(_ok(f"annotation {name!r} is valid") if ok
                       else _fail(f"annotation {name!r} is valid", detail))
    for rule in parse_rules(alerts_path):
        run(f"alert {rule.name} expr is valid", rule.expr, need_data=False)
    return results


# --------------------------------------------------------------------------- main


def _print(results: list[CheckResult]) -> None:
    for r in results:
        status = "PASS" if r.passed else "FAIL"
        print(f"{status} {r.name}" + (f": {r.detail}" if r.detail else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prometheus-url", help="e.g. http://127.0.0.1:9090: also run every "
                        "dashboard query against this Prometheus and require data")
    parser.add_argument("--job", action="append", help="job value(s) to select in the job "
                        "variable (repeatable; default: All)")
    parser.add_argument("--scrape-interval", help="scrape interval Grafana assumes "
                        "(default: the target's, as Prometheus reports it)")
    parser.add_argument("--interval", help="$__interval (default: the scrape interval)")
    parser.add_argument("--range", dest="time_range",
                        help="$__range (default: the dashboard's time range)")
    args = parser.parse_args(argv)

    results: list[CheckResult] = []
    sections = [
        ("Dashboard structure", lambda: check_dashboard_structure(load_dashboard())
         + check_provisioning()),
        ("Prometheus config and rules (promtool)", check_prometheus_files),
    ]
    if args.prometheus_url:
        sections.append((f"Queries against {args.prometheus_url}", lambda: check_queries(
            args.prometheus_url, args.job, scrape_interval=args.scrape_interval,
            interval=args.interval, time_range=args.time_range)))
    for title, run in sections:
        print(f"== {title}")
        try:
            section = run()
        except Exception as e:  # a crash in one section is reported, not hidden
            section = [_fail(title, f"{type(e).__name__}: {e}")]
        _print(section)
        results += section

    failed = [r for r in results if not r.passed]
    if failed:
        print("\nFailures:")
        _print(failed)
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
