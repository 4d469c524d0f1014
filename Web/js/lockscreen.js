// The lock-screen rules of DESIGN.md sections 2 and 4, replayed in the browser from a
// booking's events so support can see the card as it was at any instant. This mirrors the
// server's state engine (StateEngine.swift / ActivityRecord.swift) rule for rule; the
// end-to-end test runs the shared test vectors (lockscreen-rules.json) through it.

import { toSeconds } from "./format.js";

export const MAX_ACTIVE = 8 * 3600; // the system ends an activity 8 h after its start
export const MAX_ENDED_VISIBLE = 4 * 3600; // an ended activity stays at most 4 h…
export const MAX_LIFETIME = 12 * 3600; // …and never past 12 h after its start
export const P10_WINDOW = 3600;
/** The server's default priority-10 budget per activity and hour (`--priority10-budget`). */
export const DEFAULT_P10_BUDGET = 15;

/** The budget a read-API response states (`priority10_budget`), or the default from a server
 *  too old to state it. */
export function p10Budget(body) {
  const b = body?.priority10_budget;
  return Number.isInteger(b) && b >= 0 ? b : DEFAULT_P10_BUDGET;
}

const INVALIDATING_REASONS = new Set(["BadDeviceToken", "ExpiredToken", "Unregistered", "DeviceTokenNotForTopic"]);

/** An event as stored by the server (or ingested), with its times as Unix seconds. */
export function normaliseEvent(e, index = 0) {
  const t = toSeconds(e.occurred_at);
  const push = e.type === "push.sent"
    ? {
        kind: e.event,
        status: Number(e.status ?? 0),
        reason: e.reason ?? null,
        latencyMs: Number(e.latency_ms ?? 0),
        priority: Number(e.priority ?? 10),
      }
    : null;
  return {
    index,
    raw: e,
    type: e.type,
    activityId: e.activity_id ?? null,
    bookingId: e.booking_id ?? null,
    attributesType: e.attributes_type ?? null,
    app: e.app ?? null,
    t,
    timestamp: toSeconds(e.timestamp) ?? t,
    staleDate: toSeconds(e.stale_date),
    dismissalDate: toSeconds(e.dismissal_date),
    dismissalPolicy: e.dismissal_policy ?? null,
    relevanceScore: typeof e.relevance_score === "number" ? e.relevance_score : null,
    contentState: e.content_state && typeof e.content_state === "object" ? e.content_state : null,
    attributes: e.attributes && typeof e.attributes === "object" ? e.attributes : null,
    fingerprint: e.token_fingerprint ?? e.push_token ?? null,
    source: e.source ?? "app",
    push,
  };
}

const accepted = (p) => p.status === 200;
const invalidates = (p) => p.status === 410 || INVALIDATING_REASONS.has(p.reason ?? "");

function newRecord(ev, source) {
  return {
    activityId: ev.activityId,
    bookingId: ev.bookingId,
    attributesType: ev.attributesType,
    app: ev.app,
    source,
    startedAt: ev.t,
    attributes: ev.attributes,
    contentState: ev.contentState,
    contentTimestamp: ev.timestamp,
    staleDate: ev.staleDate,
    relevanceScore: ev.relevanceScore,
    reportedStale: false,
    staleCounted: false,
    endedAt: null,
    endedBy: null,
    dismissalPolicy: null,
    dismissalDate: null,
    dismissedAt: null,
    fingerprint: ev.type === "activity.started" ? ev.fingerprint : null,
    rotations: 0,
    rotatedAt: null,
    invalidReason: null,
    lastPush: null,
    p10: [],
  };
}

const systemEndAt = (r) => r.startedAt + MAX_ACTIVE;

/** When an ended activity leaves the lock screen (null while not ended). */
export function visibleUntil(r) {
  if (r.endedAt === null) return null;
  const latest = Math.min(r.endedAt + MAX_ENDED_VISIBLE, r.startedAt + MAX_LIFETIME);
  if (r.dismissedAt !== null) return Math.min(r.dismissedAt, latest);
  if (r.dismissalPolicy === "immediate") return r.endedAt;
  if (r.dismissalDate !== null) return Math.min(r.dismissalDate, latest);
  return latest;
}

const isEnded = (r, now) => (r.endedAt !== null && now >= r.endedAt) || now >= systemEndAt(r);

/** The state at `now`, in DESIGN.md section 4's order: dismissed, ended, stale, active. */
export function stateAt(r, now) {
  if (r.dismissedAt !== null && now >= r.dismissedAt) return "dismissed";
  if (isEnded(r, now)) {
    const until = visibleUntil(r) ?? systemEndAt(r) + MAX_ENDED_VISIBLE;
    return now >= until ? "dismissed" : "ended";
  }
  if (r.reportedStale) return "stale";
  if (r.staleDate !== null && now >= r.staleDate) return "stale";
  return "active";
}

function p10Count(r, now) {
  return r.p10.filter((t) => t > now - P10_WINDOW && t <= now).length;
}

/**
 * Replays `events` (server order: occurred_at, ties in arrival order) up to and including
 * instant `until` (Unix seconds) — or only the first `count` events when given.
 * Returns `records` (Map activity id → record), `notes` (one per replayed event: what it did
 * on the lock screen) and `derived` (transitions that time alone caused: stale, system end,
 * removal), each with its instant.
 */
export function replay(rawEvents, { until = Infinity, count = Infinity } = {}) {
  const events = rawEvents.map((e, i) => (e && e.raw ? e : normaliseEvent(e, i)));
  const records = new Map();
  const notes = [];
  const derived = [];

  const advance = (r, time) => {
    if (!r.staleCounted && !r.reportedStale && r.staleDate !== null && r.staleDate <= time &&
        r.staleDate < (r.endedAt ?? systemEndAt(r))) {
      r.staleCounted = true;
      derived.push({ t: r.staleDate, activityId: r.activityId, kind: "stale", text: "Stale: its stale date passed" });
    }
    if (r.endedAt === null && time >= systemEndAt(r)) {
      r.endedAt = systemEndAt(r);
      r.endedBy = "system";
      derived.push({ t: r.endedAt, activityId: r.activityId, kind: "ended", text: "Ended by the system (8 h limit)" });
    }
    const vu = visibleUntil(r);
    if (r.dismissedAt === null && vu !== null && time >= vu) {
      r.dismissedAt = vu;
      derived.push({ t: vu, activityId: r.activityId, kind: "dismissed", text: "Removed from the lock screen" });
    }
  };

  const applyContent = (ev, r, note) => {
    if (!(ev.timestamp > r.contentTimestamp)) {
      note.effect = "ignored";
      note.why = "out_of_order";
      return false;
    }
    note.diff = diff(r.contentState, ev.contentState);
    if (ev.contentState) r.contentState = ev.contentState;
    r.contentTimestamp = ev.timestamp;
    r.staleDate = ev.staleDate;
    r.reportedStale = false;
    r.staleCounted = false;
    if (ev.relevanceScore !== null) r.relevanceScore = ev.relevanceScore;
    note.effect = "applied";
    return true;
  };

  const end = (r, t, by, policy, dismissalDate) => {
    r.endedAt = t;
    r.endedBy = by;
    r.dismissalPolicy = policy;
    r.dismissalDate = dismissalDate;
  };

  const start = (ev, source, note) => {
    if (!ev.activityId || !ev.attributesType) return;
    const existing = records.get(ev.activityId);
    if (existing) {
      existing.attributes = existing.attributes ?? ev.attributes;
      existing.fingerprint = existing.fingerprint ?? ev.fingerprint;
      existing.app = existing.app ?? ev.app;
      note.effect = "info";
      note.why = "already_started";
      return;
    }
    records.set(ev.activityId, newRecord(ev, source));
    note.effect = "applied";
    note.diff = diff(null, ev.contentState);
  };

  for (const ev of events) {
    if (notes.length >= count || ev.t === null || ev.t > until) break;
    const note = { index: ev.index, t: ev.t, activityId: ev.activityId, effect: "info", why: null, diff: null };
    notes.push(note);
    const t = ev.t;
    const r = ev.activityId ? records.get(ev.activityId) : undefined;
    if (r) advance(r, t);
    note.before = r ? stateAt(r, t) : null;
    note.shownTimestamp = r ? r.contentTimestamp : null;
    note.currentFingerprint = r ? r.fingerprint : null;

    switch (ev.type) {
      case "activity.started":
        start(ev, ev.source, note);
        break;
      case "push.sent": {
        const p = ev.push;
        if (!r && p.kind === "start" && accepted(p) && ev.activityId && ev.attributesType) {
          start(ev, "push_to_start", note);
          break;
        }
        if (!r) {
          if (invalidates(p)) note.invalidated = p.reason ?? `HTTP ${p.status}`; // the server counts it too
          if (!accepted(p)) {
            note.effect = "failed";
            note.why = "not_delivered";
          } else if (p.kind === "start") {
            // As the server: a push-to-start may name no activity (DESIGN.md section 3); it starts
            // nothing by itself and is no push without effect. The activity begins with the
            // activity.started the device reports.
            note.why = "push_to_start";
          } else {
            note.effect = "ignored";
            note.why = "unknown_activity";
          }
          break;
        }
        r.lastPush = { status: p.status, reason: p.reason, latency_ms: p.latencyMs, priority: p.priority, at: t };
        if (p.priority === 10) {
          r.p10.push(t);
          r.p10.sort((a, b) => a - b);
          const newest = r.p10[r.p10.length - 1];
          r.p10 = r.p10.filter((x) => x > newest - P10_WINDOW);
        }
        const toCurrent = r.fingerprint === null || ev.fingerprint === r.fingerprint;
        if (invalidates(p) && toCurrent && r.invalidReason === null) {
          r.invalidReason = p.reason ?? `HTTP ${p.status}`;
          note.invalidated = r.invalidReason;
        }
        if (!accepted(p)) {
          note.effect = "failed";
          note.why = "not_delivered";
          break;
        }
        if (p.kind === "start") {
          note.effect = "info";
          note.why = "already_started";
          break;
        }
        const st = stateAt(r, t);
        let noEffect = null;
        if (st === "dismissed") noEffect = "dismissed";
        else if (st === "ended") noEffect = "ended";
        else if (!toCurrent) noEffect = "superseded_token";
        else if (p.kind === "update" && ev.timestamp <= r.contentTimestamp) noEffect = "out_of_order";
        if (noEffect) {
          note.effect = "ignored";
          note.why = noEffect;
          break;
        }
        if (p.kind === "update") {
          applyContent(ev, r, note);
        } else {
          if (ev.contentState && ev.timestamp > r.contentTimestamp) {
            note.diff = diff(r.contentState, ev.contentState);
            r.contentState = ev.contentState;
            r.contentTimestamp = ev.timestamp;
          }
          end(r, t, "push", ev.dismissalDate === null ? "default" : "after", ev.dismissalDate);
          advance(r, t);
          note.effect = "applied";
        }
        break;
      }
      case "activity.updated":
        if (!r) { note.effect = "ignored"; note.why = "unknown_activity"; break; }
        if (isEnded(r, t)) { note.effect = "ignored"; note.why = "ended"; break; }
        applyContent(ev, r, note);
        break;
      case "activity.token_updated":
        if (!r) { note.why = "unknown_activity"; break; }
        if (!ev.fingerprint || ev.fingerprint === r.fingerprint) { note.why = "same_token"; break; }
        note.fromFingerprint = r.fingerprint;
        if (r.fingerprint !== null) {
          r.rotations += 1;
          r.rotatedAt = t;
          note.effect = "applied";
          note.why = "rotated";
        } else {
          note.effect = "applied";
          note.why = "first_token";
        }
        r.fingerprint = ev.fingerprint;
        r.invalidReason = null;
        break;
      case "activity.stale":
        if (!r) { note.why = "unknown_activity"; break; }
        if (isEnded(r, t)) { note.effect = "ignored"; note.why = "ended"; break; }
        if (r.reportedStale) { note.why = "already_stale"; break; }
        r.reportedStale = true;
        r.staleCounted = true;
        note.effect = "applied";
        break;
      case "activity.ended":
        if (!r) { note.why = "unknown_activity"; break; }
        if (!isEnded(r, t)) {
          if (ev.contentState && ev.timestamp > r.contentTimestamp) {
            note.diff = diff(r.contentState, ev.contentState);
            r.contentState = ev.contentState;
            r.contentTimestamp = ev.timestamp;
          }
          end(r, t, "app", ev.dismissalPolicy, ev.dismissalDate);
          note.effect = "applied";
        } else {
          note.effect = "ignored";
          note.why = "ended";
        }
        advance(r, t);
        break;
      case "activity.dismissed":
        if (!r) { note.why = "unknown_activity"; break; }
        if (!isEnded(r, t)) end(r, t, "app", "immediate", null);
        if (r.dismissedAt === null) r.dismissedAt = t;
        note.effect = "applied";
        break;
      default:
        note.why = "unknown_type";
    }
    const after = ev.activityId ? records.get(ev.activityId) : undefined;
    note.after = after ? stateAt(after, t) : null;
  }
  if (until !== Infinity) for (const r of records.values()) advance(r, until);
  derived.sort((a, b) => a.t - b.t);
  return { records, notes, derived, events };
}

/** One record at `now` in the read API's activity shape (times as Unix seconds). */
export function toActivity(r, now) {
  const state = stateAt(r, now);
  const sysEnd = systemEndAt(r);
  const vu = visibleUntil(r) ?? (now >= sysEnd ? sysEnd + MAX_ENDED_VISIBLE : null);
  return {
    activity_id: r.activityId,
    booking_id: r.bookingId,
    attributes_type: r.attributesType,
    app: r.app,
    source: r.source,
    state,
    started_at: r.startedAt,
    ended_at: r.endedAt ?? (now >= sysEnd ? sysEnd : null),
    ended_by: r.endedBy ?? (now >= sysEnd ? "system" : null),
    stale_date: r.staleDate,
    visible_until: vu,
    dismissed_at: r.dismissedAt ?? (state === "dismissed" ? vu : null),
    relevance_score: r.relevanceScore,
    attributes: r.attributes,
    content_state: r.contentState,
    content_timestamp: r.contentTimestamp,
    token: {
      fingerprint: r.fingerprint,
      rotations: r.rotations,
      rotated_at: r.rotatedAt,
      invalidated: r.invalidReason !== null,
      invalid_reason: r.invalidReason,
    },
    last_push: r.lastPush,
    priority10_last_hour: p10Count(r, now),
  };
}

/** The activity as the phone showed it at `at`, from the events alone (null before it started). */
export function activityAt(events, activityId, at) {
  const { records } = replay(events, { until: at });
  const r = records.get(activityId);
  return r ? toActivity(r, at) : null;
}

/** What changed between two content-states: [{key, from, to}] (absent keys are undefined). */
export function diff(before, after) {
  if (!after) return [];
  const out = [];
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after)]);
  for (const key of keys) {
    const a = before ? before[key] : undefined;
    const b = after[key];
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ key, from: a, to: b });
  }
  return out;
}
