// One activity as the phone shows it (lock-screen card and Dynamic Island previews) and as
// on-call needs it (state badges, last push, token, priority-10 budget).

import { h } from "./dom.js";
import { icon } from "./icons.js";
import { context, renderSafely, interpolate, cssColor, live } from "./templates.js";
import * as fmt from "./format.js";

const STATE_LABEL = { active: "Active", stale: "Stale", ended: "Ended", dismissed: "Dismissed", pending: "Scheduled" };

/** The display name from the template (interpolated) or the attributes type. */
export function displayName(activity, template) {
  const ctx = context(activity, template);
  return (template.display_name ? interpolate(template.display_name, ctx) : "") || activity.attributes_type || "Activity";
}

/**
 * The instant a card's content is drawn at: `at` (null: now, ticking), except that a dismissed
 * card is what it showed last, so its timers stop at the dismissal. An ended card still on the
 * lock screen keeps ticking, as a SwiftUI timer does on the phone.
 */
function drawnAt(activity, at) {
  if (activity.state !== "dismissed") return at;
  const gone = fmt.toSeconds(activity.dismissed_at);
  if (gone === null) return at;
  return at === null ? gone : Math.min(at, gone);
}

/** The lock-screen card alone. `at` (Unix seconds) renders a past instant with still timers. */
export function lockScreen(activity, template, { at = null } = {}) {
  const ctx = context(activity, template, { at: drawnAt(activity, at) });
  const card = h("div", { class: ["ls-card", `ls-${activity.state}`], attrs: { role: "group", "aria-label": "Lock screen" } },
    renderSafely(template.lock_screen, ctx));
  const bg = cssColor(template.background, template.tint);
  if (bg) card.style.backgroundColor = bg;
  return card;
}

/** Compact (leading + trailing around the camera), minimal and expanded Dynamic Island views. */
export function islands(activity, template, { at = null } = {}) {
  const ctx = context(activity, template, { at: drawnAt(activity, at) });
  const ex = template.expanded ?? {};
  const region = (cls, spec) => h("div", { class: ["di-region", cls] }, renderSafely(spec, ctx));
  // Compact and minimal cannot grow: their texts shrink, shorten or end in an ellipsis (fit.js).
  const fitted = { ...ctx, fit: true };
  const small = (cls, spec) => h("div", { class: ["di-region", cls] }, renderSafely(spec, fitted));
  // An ended activity stays on the lock screen but leaves the Dynamic Island.
  const gone = activity.state === "ended" || activity.state === "dismissed";
  return h("div", { class: ["islands", gone ? "islands-gone" : null], title: gone ? "Ended: no longer in the Dynamic Island" : null },
    h("figure", { class: "di-fig di-fig-compact" },
      h("div", { class: "di di-compact", attrs: { role: "group", "aria-label": "Dynamic Island, compact" } },
        small("di-lead", template.compact_leading), h("div", { class: "di-camera" }), small("di-trail", template.compact_trailing)),
      h("figcaption", { text: "Compact" })),
    h("figure", { class: "di-fig di-fig-minimal" },
      h("div", { class: "di di-minimal", attrs: { role: "group", "aria-label": "Dynamic Island, minimal" } },
        small("di-min", template.minimal)),
      h("figcaption", { text: "Minimal" })),
    template.small ? smallView(template.small, fitted) : null,
    h("figure", { class: "di-fig di-fig-expanded" },
      h("div", { class: "di di-expanded", attrs: { role: "group", "aria-label": "Dynamic Island, expanded" } },
        region("di-ex-leading", ex.leading), region("di-ex-center", ex.center), region("di-ex-trailing", ex.trailing),
        region("di-ex-bottom", ex.bottom)),
      h("figcaption", { text: "Expanded" })));
}

/**
 * The `small` activity family (iOS 26): the Apple Watch Smart Stack and CarPlay show the activity
 * in a compact view about 2:1, with no camera to work around. Like the compact island it cannot
 * grow, so its texts fit their place (fit.js): each within the room its layout gives it.
 */
function smallView(spec, fitted) {
  return h("figure", { class: "di-fig sm-fig" },
    h("div", { class: "sm-view", attrs: { role: "group", "aria-label": "Apple Watch and CarPlay (small)" } },
      h("div", { class: ["di-region", "sm-region", "fit-own"] }, renderSafely(spec, fitted))),
    h("figcaption", { text: "Watch · CarPlay" }));
}

/** State badges: stale with the content's age, ended with visible-until, dismissed, token, and
 *  over the priority-10 budget as the server judges it (`priority10_heavy`, the rule of
 *  `liveactivity_priority10_heavy_activities`, against `budget`: the server's `priority10_budget`). */
export function badges(activity, { at = null, budget = null } = {}) {
  const now = at ?? fmt.nowSeconds();
  const out = [];
  const st = activity.state;
  const badge = (cls, text, title, fn) => {
    const el = h("span", { class: ["badge", cls], title });
    if (fn && at === null) live(el, fn);
    else el.textContent = fn ? fn(now) : text;
    return el;
  };
  const contentAt = fmt.toSeconds(activity.content_timestamp);
  if (st === "active") out.push(badge("badge-active", "Active"));
  if (st === "pending") {
    // A scheduled start (iOS 26): not on the lock screen until its start date.
    const start = fmt.toSeconds(activity.start_date);
    out.push(badge("badge-pending", `Pending — starts ${fmt.clock(start)}`, `Scheduled to start at ${fmt.fullDate(start)}; not on the lock screen until then`));
  }
  if (st === "stale") {
    out.push(badge("badge-stale", null, `Stale since ${fmt.fullDate(fmt.toSeconds(activity.stale_date))}; content from ${fmt.fullDate(contentAt)}`,
      (n) => `Stale · content ${fmt.duration(n - (contentAt ?? n))} old`));
  }
  if (st === "ended") {
    const until = fmt.toSeconds(activity.visible_until);
    const by = activity.ended_by ? ` by ${activity.ended_by}` : "";
    out.push(badge("badge-ended", `Ended — visible until ${fmt.clock(until)}`,
      `Ended${by} at ${fmt.fullDate(fmt.toSeconds(activity.ended_at))}; leaves the lock screen at ${fmt.fullDate(until)}`));
  }
  if (st === "dismissed") {
    out.push(badge("badge-dismissed", `Dismissed ${fmt.clock(fmt.toSeconds(activity.dismissed_at))}`, "No longer on the lock screen"));
  }
  if (activity.token?.invalidated) {
    out.push(badge("badge-invalid", `Token invalidated · ${activity.token.invalid_reason ?? "APNs"}`,
      "APNs said this push token is dead: pushes to it cannot reach the phone"));
  }
  if (activity.priority10_heavy) {
    const more = budget === null ? "More priority-10 pushes in the last hour than the server's budget" : `More than ${budget} priority-10 pushes in the last hour`;
    out.push(badge("badge-heavy", `Priority 10 over budget`, `${more}: iOS throttles`));
  }
  return h("div", { class: "badges" }, out);
}

function pushText(p) {
  if (!p) return "none yet";
  const status = p.status === 0 ? "no answer" : p.status === 200 ? "200 OK" : `${p.status}${p.reason ? ` ${p.reason}` : ""}`;
  return `${status} · ${fmt.latency(p.latency_ms)} · p${p.priority}`;
}

/** The diagnostics under a card: booking, ids, times, last push, token, priority-10 pushes
 *  against `budget` (the server's `priority10_budget`; over it as the server says). */
export function diagnostics(activity, { at = null, bookingLink = true, budget = null } = {}) {
  const row = (label, ...value) => h("div", { class: "diag-row" }, h("dt", { text: label }), h("dd", {}, ...value));
  const rel = (seconds) => {
    const el = h("span", { class: "muted" });
    if (seconds === null) return el;
    if (at === null) return live(el, (n) => ` · ${fmt.relative(seconds, n)}`);
    el.textContent = ` · ${fmt.relative(seconds, at)}`;
    return el;
  };
  const p = activity.last_push;
  const pushAt = p ? fmt.toSeconds(p.at) : null;
  const pushClass = !p ? "muted" : p.status === 200 ? "ok" : "bad";
  const tok = activity.token ?? {};
  const p10 = activity.priority10_last_hour ?? 0;
  const over = activity.priority10_heavy === true;
  // The meter only draws the count against the budget; whether it is over is the server's word.
  const share = budget === null ? 0 : budget > 0 ? p10 / budget : p10 > 0 ? 1 : 0;
  const meter = h("span", { class: ["meter", over ? "meter-over" : share > 0.66 ? "meter-warn" : null] },
    h("span", { class: "meter-fill" }));
  const fill = Math.min(100, share * 100);
  meter.firstChild.style.width = `${fill.toFixed(0)}%`;
  const booking = activity.booking_id;
  return h("dl", { class: "diag" },
    row("Booking", booking
      ? bookingLink ? h("a", { class: "booking-link mono", attrs: { href: bookingHref(booking), dir: "auto" }, text: booking }) : h("span", { class: "mono", attrs: { dir: "auto" }, text: booking })
      : h("span", { class: "muted", text: "—" })),
    row("Activity", h("span", { class: "mono ellipsis", attrs: { dir: "auto" }, title: activity.activity_id, text: activity.activity_id })),
    channelRow(activity, row),
    row(activity.state === "pending" ? "Requested" : "Started", h("span", { class: "tabular", text: fmt.clock(fmt.toSeconds(activity.started_at)) }), rel(fmt.toSeconds(activity.started_at)),
      activity.source === "push_to_start" ? h("span", { class: "muted", text: " · push-to-start" }) : null),
    row("Content", h("span", { class: "tabular", text: fmt.clock(fmt.toSeconds(activity.content_timestamp), { withSeconds: true }) }), rel(fmt.toSeconds(activity.content_timestamp))),
    row("Last push", h("span", { class: ["push", pushClass], text: pushText(p) }), p ? rel(pushAt) : null),
    deliveryRow(activity, row, rel),
    row("Token", tok.fingerprint ? h("span", { class: "mono", title: "SHA-256 fingerprint (first 16 hex)", text: tok.fingerprint }) : h("span", { class: "muted", text: "none" }),
      tok.rotations ? h("span", { class: "muted", text: ` · ${tok.rotations} rotation${tok.rotations > 1 ? "s" : ""}${tok.rotated_at ? ` (${fmt.clock(fmt.toSeconds(tok.rotated_at))})` : ""}` }) : null,
      tok.invalidated ? h("span", { class: "bad", text: ` · invalid: ${tok.invalid_reason ?? "APNs"}` }) : null),
    row("Priority 10", meter, h("span", { class: ["tabular", "p10-count", over ? "bad" : null], text: budget === null ? ` ${p10}` : ` ${p10} / ${budget}`,
      title: budget === null ? "Priority-10 pushes in the last hour" : `Priority-10 pushes in the last hour, against the server's budget of ${budget} (--priority10-budget)` }),
    h("span", { class: "muted", text: " last hour" })));
}

/** The broadcast channel the activity receives (`channel_id`, DESIGN.md section 4 "Channels"):
 *  its content also changes by what the backend publishes to that channel. */
function channelRow(activity, row) {
  const id = activity.channel_id;
  if (typeof id !== "string" || !id) return null;
  return row("Channel", h("span", { class: "channel", title: `Updated by channel ${id}: broadcast pushes to it reach every activity subscribed` },
    "Updated by channel ", h("a", { class: "mono channel-id", attrs: { href: channelHref(id), dir: "auto" }, text: id })));
}

/** `#/channels/<id>`: the channel's page. */
export function channelHref(id) {
  return `#/channels/${encodeURIComponent(id)}`;
}

/** What the phone made of the pushes, as the server judged it: the latest push it could not
 *  decode, pushes its own report showed missed, or when it last confirmed one. */
function deliveryRow(activity, row, rel) {
  const bad = activity.undecodable;
  const missed = activity.delivery?.missed ?? 0;
  const confirmed = fmt.toSeconds(activity.delivery?.last_confirmed_at ?? null);
  if (bad) return row("Phone", h("span", { class: "bad" }, "cannot decode the last push: ", h("bdi", { text: bad.detail })), rel(fmt.toSeconds(bad.at)));
  if (missed) return row("Phone", h("span", { class: "bad", text: `${missed} push${missed === 1 ? "" : "es"} accepted by APNs not shown` }));
  if (confirmed !== null) return row("Phone", h("span", { class: "ok", text: "showed the pushed content" }), rel(confirmed));
  return null;
}

/** `#/booking/<id>` (optionally at an instant, Unix seconds, kept to the millisecond). */
export function bookingHref(id, at = null) {
  // Rounded, not truncated as `new Date` does: an instant computed in seconds may be a hair
  // under its millisecond.
  return `#/booking/${encodeURIComponent(id)}${at !== null ? `?at=${encodeURIComponent(new Date(Math.round(at * 1000)).toISOString())}` : ""}`;
}

/** A scheduled activity (`pending` until its `start_date`, iOS 26), for the wall's own section:
 *  not on the lock screen yet, so its start time first, then what its lock screen will show. */
export function scheduledCard(activity, template, { budget = null } = {}) {
  const start = fmt.toSeconds(activity.start_date);
  const until = h("span", { class: "muted sched-in" });
  if (start !== null) live(until, (n) => ` · ${fmt.relative(start, n)}`);
  return h("article", {
    class: ["sched-card", `state-${activity.state}`],
    data: { activityId: activity.activity_id, state: activity.state, type: activity.attributes_type },
  },
    cardHead(activity, template),
    h("p", { class: "sched-start", title: start === null ? null : `Scheduled start: ${fmt.fullDate(start)}` },
      h("span", { class: "sched-at tabular", text: start === null ? "Start date unknown" : `starts at ${fmt.clock(start)}` }), until),
    h("details", { class: "sched-preview" },
      h("summary", { text: "Its lock screen at the start" }),
      lockScreen(activity, template)),
    diagnostics(activity, { budget }));
}

/** A card's head: the app icon in the widget's tint, the title, app and type, the state dot. */
function cardHead(activity, template) {
  const appIcon = h("span", { class: "app-icon" }, icon(template.icon ?? "app"));
  appIcon.style.backgroundColor = cssColor(template.tint, null) ?? "#0a84ff";
  return h("header", { class: "card-head" },
    appIcon,
    h("div", { class: "card-titles" },
      // dir="auto" here and on every id or value: right-to-left text stays in its own box.
      h("div", { class: "card-title", attrs: { dir: "auto" }, text: displayName(activity, template) }),
      h("div", { class: "card-sub" }, [activity.app, activity.attributes_type].filter(Boolean).map((x, i) => [i ? " · " : "", h("bdi", { text: x })]))),
    h("span", { class: ["state-dot", `dot-${activity.state}`], title: STATE_LABEL[activity.state] ?? activity.state }));
}

/** The whole wall card; `budget` is the server's priority-10 budget. */
export function wallCard(activity, template, { budget = null } = {}) {
  const card = h("article", {
    class: ["card", `state-${activity.state}`, activity.token?.invalidated ? "token-invalid" : null],
    data: { activityId: activity.activity_id, state: activity.state, type: activity.attributes_type },
  },
    cardHead(activity, template),
    badges(activity, { budget }),
    lockScreen(activity, template),
    islands(activity, template),
    diagnostics(activity, { budget }));
  return card;
}
