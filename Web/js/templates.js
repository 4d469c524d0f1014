// Declarative widget templates: one JSON file per attributes type in `templates/`, rendered
// here into lock-screen and Dynamic Island views. See templates/FORMAT.md for the format.
// Every value from attributes or content-state reaches the page as text, never as markup.

import { h, svg } from "./dom.js";
import { icon } from "./icons.js";
import * as fmt from "./format.js";
import { fitText } from "./fit.js";
import { TIMEOUT_MS } from "./api.js";

const TYPE_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,127}$/;
// A template file that could not be fetched (no answer, a 5xx, a cut body) is not a type without a
// template: its type is drawn on the generic card meanwhile and the file is asked for again on a
// later refresh, after a wait that doubles from the first to the last (a server that keeps failing
// is not asked at every refresh of every view).
const RETRY_FIRST_MS = 5000;
const RETRY_MAX_MS = 5 * 60 * 1000;
const entries = new Map(); // key → { promise, template, transient, retryAt, delay, retrying }
const changes = new EventTarget();
let revision = 0; // each template object drawn gets its own: a view redraws a card when it changes

/** The generic template, used when a type has no file (or its file is broken). */
const BUILT_IN_GENERIC = {
  format: 1,
  display_name: "{activity.attributes_type}",
  icon: "app",
  tint: "blue",
  lock_screen: { column: [{ text: "{attributes.title ?? attributes.name ?? activity.attributes_type}", font: "headline" }, { fields: "state" }] },
  compact_leading: { icon: "app", color: "tint" },
  compact_trailing: { text: "{activity.state}", font: "caption", color: "tint" },
  minimal: { icon: "app", color: "tint" },
  expanded: { leading: { icon: "app", color: "tint" }, center: { text: "{activity.attributes_type}", font: "headline", lines: 1 }, bottom: { fields: "state", limit: 3 } },
};

const templateKey = (type) => (TYPE_NAME.test(type ?? "") ? type : "");

/** The template of a type if `loadTemplate` already finished for it, else null. Each object
 *  has a `revision`: a view that drew a card with an older one draws it again. */
export function cachedTemplate(type) {
  return entries.get(templateKey(type))?.template ?? null;
}

/** Calls `fn` whenever a type's template is replaced (a file that failed loaded at last). */
export function onTemplateChange(fn) {
  changes.addEventListener("change", () => fn());
}

/** The next wait of a backoff that doubles from RETRY_FIRST_MS up to RETRY_MAX_MS. */
const nextDelay = (delay) => Math.min(RETRY_MAX_MS, delay ? delay * 2 : RETRY_FIRST_MS);

let index = null; // Promise<{ types: Set<type> | null, transient }>
let indexRetryAt = 0;
let indexDelay = 0;

/**
 * The types `templates/index.json` lists (`types`), or null when it cannot be read. Asking for a
 * file only when it is listed spares the browser a 404 (an error in its console) per type without
 * one. An index that could not be fetched is asked for again after a backoff.
 */
function templateIndex() {
  if (index && indexRetryAt && Date.now() >= indexRetryAt) index = null;
  index ??= (async () => {
    indexRetryAt = 0;
    try {
      // A deadline: a hung server must not leave a type's template (and the views) waiting for good.
      const res = await fetch("templates/index.json", { headers: { Accept: "application/json" }, signal: AbortSignal.timeout(TIMEOUT_MS) });
      const list = res.ok ? (await res.json())?.templates : undefined;
      if (Array.isArray(list)) {
        indexDelay = 0;
        return { types: new Set(list.filter((t) => typeof t === "string")), transient: false };
      }
      console.warn(`templates/index.json: ${res.ok ? "no templates list" : `status ${res.status}`}; trying each type's file`);
      if (res.ok || res.status === 404) return { types: null, transient: false };
    } catch (err) {
      console.warn(`templates/index.json: ${err}; trying each type's file`);
    }
    indexDelay = nextDelay(indexDelay);
    indexRetryAt = Date.now() + indexDelay;
    return { types: null, transient: true };
  })();
  return index;
}

/** The template a type is drawn with now, and whether a fetch failed on the way (then it is
 *  worth asking again later). */
async function resolveTemplate(key) {
  let transient = false;
  if (key) {
    const listed = await templateIndex();
    if (listed.types === null || listed.types.has(key)) {
      const own = await fetchTemplate(`templates/${encodeURIComponent(key)}.json`);
      if (own.template) return { template: { ...own.template, generic: false }, transient: false };
      transient = own.failed;
    }
  }
  const g = await fetchTemplate("templates/_generic.json");
  return { template: { ...(g.template ?? BUILT_IN_GENERIC), generic: true }, transient: transient || g.failed };
}

/**
 * The template for an attributes type: `templates/<type>.json` when `templates/index.json` lists
 * it (or the index cannot be read), else `templates/_generic.json`. Resolves at once with the
 * template known; a type drawn generic because its file failed is fetched again in the
 * background once its backoff has passed, and `onTemplateChange` listeners hear when it loads.
 */
export function loadTemplate(type) {
  const key = templateKey(type);
  let e = entries.get(key);
  if (!e) {
    e = { template: null, transient: false, retryAt: 0, delay: 0, retrying: false };
    entries.set(key, e);
    e.promise = resolveTemplate(key).then((r) => {
      settle(e, r);
      return e.template;
    });
    return e.promise;
  }
  if (!e.template) return e.promise;
  if (e.transient && !e.retrying && Date.now() >= e.retryAt) {
    e.retrying = true;
    resolveTemplate(key).then((r) => {
      e.retrying = false;
      if (settle(e, r)) changes.dispatchEvent(new Event("change"));
    });
  }
  return Promise.resolve(e.template);
}

/** Records a fetch's result for `e`; true when its template was replaced. */
function settle(e, { template, transient }) {
  const first = e.template === null;
  e.transient = transient;
  if (transient) {
    e.delay = nextDelay(e.delay);
    e.retryAt = Date.now() + e.delay;
    if (!first) return false; // still failing: keep what is drawn
  } else {
    e.delay = 0;
  }
  e.template = { ...template, revision: ++revision };
  return true;
}

/** `{ template }` from `url`; `{ failed: true }` when it could not be fetched (no answer, a
 *  status other than 404, a body cut short): worth asking again; `{}` when there is none. */
async function fetchTemplate(url) {
  try {
    const res = await fetch(url, { headers: { Accept: "application/json" }, signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (res.status === 404 || res.status === 410) return {};
    if (!res.ok) {
      console.warn(`template ${url}: status ${res.status}; asking again later`);
      return { failed: true };
    }
    const t = await res.json();
    if (!t || typeof t !== "object" || Array.isArray(t) || !t.lock_screen) {
      console.warn(`template ${url}: not a template object with lock_screen`);
      return {};
    }
    return { template: t };
  } catch (err) {
    console.warn(`template ${url}: ${err}; asking again later`);
    return { failed: true };
  }
}

// ---------------------------------------------------------------------------------------------
// Ticking: timers and relative times update once a second, only while on the page.

const ticking = new Set();
let tickerStarted = false;

/** Keeps `node`'s text equal to `fn(now)`, updated every second while the node is in the page. */
export function live(node, fn) {
  node.textContent = fn(fmt.nowSeconds());
  node.__tick = fn;
  ticking.add(node);
  if (!tickerStarted) {
    tickerStarted = true;
    const loop = () => {
      const now = fmt.nowSeconds();
      for (const n of ticking) {
        if (!n.isConnected) {
          if (n.__seen) ticking.delete(n);
          continue;
        }
        n.__seen = true;
        const text = n.__tick(now);
        if (n.textContent !== text) n.textContent = text;
      }
      setTimeout(loop, 1000 - (Date.now() % 1000) + 5);
    };
    setTimeout(loop, 1000 - (Date.now() % 1000) + 5);
  }
  return node;
}

// ---------------------------------------------------------------------------------------------
// Values

const SYSTEM_COLORS = {
  cyan: "#64d2ff", blue: "#0a84ff", green: "#30d158", mint: "#63e6e2", teal: "#40cbe0",
  indigo: "#5e5ce6", purple: "#bf5af2", pink: "#ff375f", red: "#ff453a", orange: "#ff9f0a",
  yellow: "#ffd60a", brown: "#ac8e68", gray: "#98989d", white: "#ffffff", black: "#000000",
};

/** A template colour (system name or #hex) as CSS, or null when not one. */
export function cssColor(name, tint) {
  if (!name) return null;
  if (name === "tint") return cssColor(tint, null) ?? SYSTEM_COLORS.blue;
  if (Object.hasOwn(SYSTEM_COLORS, name)) return SYSTEM_COLORS[name];
  if (/^#[0-9a-f]{3}([0-9a-f]{3})?([0-9a-f]{2})?$/i.test(name)) return name;
  return null;
}

/** Resolves "state.a.b" / "attributes.x" / "activity.y" in `ctx`. */
function lookup(path, ctx) {
  if (typeof path !== "string" || !path) return undefined;
  const [root, ...rest] = path.trim().split(".");
  let v = { state: ctx.state, attributes: ctx.attributes, activity: ctx.activity }[root];
  for (const key of rest) {
    if (v === null || v === undefined || typeof v !== "object" || !Object.hasOwn(v, key)) return undefined;
    v = v[key];
  }
  return v;
}

const APPLE_EPOCH = 978307200; // 2001-01-01T00:00:00Z: Swift's Date encodes as seconds since it

/**
 * A content-state date as Unix seconds. Swift's default Codable `Date` is seconds since 2001, and
 * that is how the phone decodes the app's ContentState (the default, "apple_reference"): a
 * backend that sends Unix seconds there shows a date 31 years ahead on the phone, and so here.
 * "unix" and "unix_ms" are for apps that decode dates themselves; "auto" guesses, picking the
 * reading nearest the content's own timestamp (what a backend meant, not what a phone shows).
 */
export function decodeDate(value, encoding = "apple_reference", near = fmt.nowSeconds()) {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") {
    if (/^-?\d+(\.\d+)?$/.test(value.trim())) return decodeDate(Number(value), encoding, near);
    return fmt.toSeconds(value);
  }
  if (typeof value !== "number" || !Number.isFinite(value)) return null;
  switch (encoding) {
    case "apple_reference": return value + APPLE_EPOCH;
    case "unix": return value;
    case "unix_ms": return value / 1000;
    default: {
      const candidates = [value, value + APPLE_EPOCH, value / 1000];
      return candidates.reduce((best, c) => (Math.abs(c - near) < Math.abs(best - near) ? c : best));
    }
  }
}

/** Formats a value for display (always returns a string). */
export function formatValue(v, format, ctx) {
  if (v === undefined || v === null || v === "") return "";
  const num = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
  switch (format) {
    case "integer": return Number.isFinite(num) ? fmt.number(Math.round(num)) : String(v);
    case "number": return Number.isFinite(num) ? fmt.number(num, { maximumFractionDigits: 2 }) : String(v);
    case "decimal1": return Number.isFinite(num) ? (fmt.isHuge(num) ? fmt.number(num) : num.toFixed(1)) : String(v);
    case "percent": return Number.isFinite(num) ? `${fmt.isHuge(num * 100) ? fmt.number(num * 100) : Math.round(num * 100)}%` : String(v);
    case "minutes": {
      if (!Number.isFinite(num)) return String(v);
      const m = Math.max(0, Math.round(num));
      // Beyond a million hours the minutes are noise: the hours alone, compactly ("1.67E298 h").
      if (m >= 60e6) return `${fmt.number(Math.floor(m / 60))}${ctx?.short ? "h" : " h"}`;
      // The short form, for a place too narrow for the full one: "7m", "2h 5m".
      if (ctx?.short) return m < 60 ? `${m}m` : `${Math.floor(m / 60)}h ${m % 60}m`;
      return m < 60 ? `${m} min` : `${Math.floor(m / 60)} h ${m % 60} min`;
    }
    case "arrival": {
      if (!Number.isFinite(num)) return String(v);
      const base = fmt.toSeconds(ctx.activity?.content_timestamp) ?? ctx.now();
      return fmt.clock(base + num * 60);
    }
    case "time": return fmt.clock(decodeDate(v, ctx.dates, contentTime(ctx)));
    case "datetime": return fmt.fullDate(decodeDate(v, ctx.dates, contentTime(ctx)));
    case "relative": return fmt.relative(decodeDate(v, ctx.dates, contentTime(ctx)), ctx.now());
    case "uppercase": return fmt.jsonValue(v).toUpperCase();
    default:
      if (typeof v === "number") return fmt.number(v, { maximumFractionDigits: 3 });
      if (typeof v === "boolean") return v ? "Yes" : "No";
      return fmt.jsonValue(v);
  }
}

const contentTime = (ctx) => fmt.toSeconds(ctx.activity?.content_timestamp) ?? ctx.now();

/** "{state.driverName}", "{state.duration|minutes}", "{attributes.title ?? activity.attributes_type}". */
export function interpolate(template, ctx) {
  return String(template).replace(/\{([^{}]+)\}/g, (_, expr) => {
    const [paths, format] = expr.split("|").map((s) => s.trim());
    for (const path of paths.split("??")) {
      const v = lookup(path.trim(), ctx);
      if (v !== undefined && v !== null && v !== "") return formatValue(v, format, ctx);
    }
    return "";
  });
}

function truthy(path, ctx) {
  const v = lookup(path, ctx);
  return !(v === undefined || v === null || v === false || v === 0 || v === "");
}

// ---------------------------------------------------------------------------------------------
// Elements

/**
 * Renders one template element (or an array of them) for `ctx`:
 * { state, attributes, activity, template, dates, now(): seconds, live: bool }.
 */
export function renderElement(spec, ctx) {
  if (spec === null || spec === undefined) return null;
  if (Array.isArray(spec)) return h("div", { class: "t-column" }, spec.map((s) => renderElement(s, ctx)));
  if (typeof spec === "string") return h("span", { class: "t-text", attrs: { dir: "auto" }, text: interpolate(spec, ctx) });
  if (typeof spec !== "object") return null;
  if (spec.when && !truthy(spec.when, ctx)) return null;
  if (spec.unless && truthy(spec.unless, ctx)) return null;

  let el;
  if ("row" in spec || "column" in spec) {
    const isRow = "row" in spec;
    el = h("div", { class: isRow ? "t-row" : "t-column" }, [].concat(spec.row ?? spec.column).map((s) => renderElement(s, ctx)));
    if (spec.gap !== undefined) el.style.gap = `${Number(spec.gap) || 0}px`;
    if (spec.justify) el.classList.add(`t-justify-${token(spec.justify)}`);
    if (spec.align) el.classList.add(`t-align-${token(spec.align)}`);
  } else if ("spacer" in spec) {
    el = h("div", { class: "t-spacer" });
  } else if ("text" in spec) {
    // dir="auto": a right-to-left name is isolated and cannot reorder its neighbours.
    el = h("span", { class: "t-text", attrs: { dir: "auto" }, text: interpolate(spec.text, ctx) });
    if (ctx.fit) fitText(el, { short: interpolate(spec.text, { ...ctx, short: true }) });
  } else if ("value" in spec) {
    const shown = (c) => {
      const text = formatValue(lookup(spec.value, c), spec.format, c);
      return text === "" ? spec.placeholder ?? "—" : `${spec.prefix ?? ""}${text}${spec.suffix ?? ""}`;
    };
    el = h("span", { class: "t-text", attrs: { dir: "auto" }, text: shown(ctx) });
    if (ctx.fit) fitText(el, { short: shown({ ...ctx, short: true }) });
  } else if ("timer" in spec) {
    el = renderTimer(spec, ctx);
  } else if ("button" in spec) {
    el = h("span", { class: "t-button", attrs: { "aria-hidden": "true" } },
      spec.icon ? icon(spec.icon) : null, spec.button ? h("span", { attrs: { dir: "auto" }, text: interpolate(spec.button, ctx) }) : null);
    const bg = cssColor(spec.background, ctx.template.tint);
    if (bg) el.style.backgroundColor = bg;
  } else if ("icon" in spec) {
    el = h("span", { class: "t-icon" }, icon(interpolate(spec.icon, ctx), { label: spec.label ?? null }));
  } else if ("progress" in spec) {
    el = renderProgress(spec, ctx);
  } else if ("fields" in spec) {
    el = renderFields(spec, ctx);
  } else {
    return null;
  }

  if (spec.font) el.classList.add(`t-font-${token(spec.font)}`);
  if (spec.weight) el.classList.add(`t-weight-${token(spec.weight)}`);
  if (spec.monospaced_digit) el.classList.add("tabular");
  if (spec.lines === 1) {
    el.classList.add("t-one-line");
    // What the ellipsis cuts off stays readable on hover (a property: text, not markup).
    if (el.classList.contains("t-text") && el.textContent) el.title = el.textContent;
  }
  if (spec.grow) el.classList.add("t-grow");
  if (spec.text_align) el.classList.add(`t-text-${token(spec.text_align)}`);
  const color = cssColor(spec.color, ctx.template.tint);
  if (color) el.style.color = color;
  else if (spec.color === "secondary" || spec.color === "tertiary") el.classList.add(`t-${spec.color}`);
  return el;
}

/** A template word as a class-name part (a typo must not throw from classList). */
const token = (v) => String(v).replace(/[^A-Za-z0-9_-]/g, "") || "x";

/** Renders a template part; a broken template shows its error instead of breaking the page. */
export function renderSafely(spec, ctx) {
  try {
    return renderElement(spec, ctx);
  } catch (err) {
    console.error("template error", err);
    return h("span", { class: "t-error", text: `Template error: ${err.message}` });
  }
}

function renderTimer(spec, ctx) {
  const startedAt = decodeDate(lookup(spec.timer, ctx), ctx.dates, contentTime(ctx));
  const pausedAt = spec.paused_at ? decodeDate(lookup(spec.paused_at, ctx), ctx.dates, contentTime(ctx)) : null;
  const down = spec.counts === "down";
  const el = h("span", { class: ["t-timer", "tabular"], data: { timer: down ? "down" : "up" } });
  if (pausedAt !== null) el.classList.add("t-paused");
  const text = (now) => {
    if (startedAt === null) return "0:00"; // as the seed: no start date shows 0:00
    const at = pausedAt ?? now;
    // `.timer` shows the time between now and the date: it counts down toward a future date
    // and up from a past one. "down" is Text(timerInterval:countsDown:), which stops at 0:00.
    const value = down ? Math.max(0, startedAt - at) : Math.abs(at - startedAt);
    return fmt.timerText(value);
  };
  if (ctx.fit) fitText(el);
  if (ctx.live && pausedAt === null && startedAt !== null) return live(el, text);
  el.textContent = text(ctx.now());
  return el;
}

function renderProgress(spec, ctx) {
  const raw = Number(lookup(spec.progress, ctx));
  const total = Number(spec.total ?? 1) || 1;
  const fraction = Number.isFinite(raw) ? Math.min(1, Math.max(0, raw / total)) : 0;
  const tint = cssColor(spec.color ?? "tint", ctx.template.tint);
  const label = `${Math.round(fraction * 100)}%`;
  if (spec.style === "ring") {
    const r = 9, c = 2 * Math.PI * r;
    const ring = svg("svg", { class: "t-ring", attrs: { viewBox: "0 0 24 24", role: "progressbar", "aria-valuenow": Math.round(fraction * 100), "aria-valuemin": 0, "aria-valuemax": 100, "aria-label": label } },
      svg("circle", { class: "t-ring-track", attrs: { cx: 12, cy: 12, r } }),
      svg("circle", { class: "t-ring-fill", attrs: { cx: 12, cy: 12, r, "stroke-dasharray": `${(fraction * c).toFixed(2)} ${c.toFixed(2)}`, transform: "rotate(-90 12 12)" } }));
    ring.style.color = tint;
    return h("span", { class: "t-ring-wrap", data: { progress: fraction.toFixed(3) } }, ring);
  }
  const fill = h("div", { class: "t-progress-fill" });
  fill.style.width = `${(fraction * 100).toFixed(1)}%`;
  fill.style.backgroundColor = tint;
  const bar = h("div", {
    class: "t-progress",
    attrs: { role: "progressbar", "aria-valuenow": Math.round(fraction * 100), "aria-valuemin": 0, "aria-valuemax": 100, "aria-label": label },
    data: { progress: fraction.toFixed(3) },
  }, fill);
  if (spec.marker) {
    const marker = h("span", { class: "t-progress-marker" }, icon(spec.marker));
    // Keep the marker's disc inside the track at 0 % and 100 %.
    marker.style.left = `clamp(12px, ${(fraction * 100).toFixed(1)}%, calc(100% - 12px))`;
    marker.style.color = tint;
    bar.append(marker);
  }
  return bar;
}

function renderFields(spec, ctx) {
  const obj = lookup(spec.fields, ctx);
  const dl = h("dl", { class: "t-fields" });
  if (!obj || typeof obj !== "object") {
    dl.append(h("div", { class: "t-field" }, h("dt", { text: spec.fields }), h("dd", { attrs: { dir: "auto" }, text: fmt.jsonValue(obj ?? null) })));
    return dl;
  }
  const entries = Object.entries(obj);
  const limit = Number(spec.limit) || 12;
  for (const [key, value] of entries.slice(0, limit)) {
    // A long key is cut (in full on hover) so that its value keeps its room.
    dl.append(h("div", { class: "t-field" }, h("dt", { attrs: { dir: "auto" }, title: key, text: key }),
      h("dd", { attrs: { dir: "auto" }, text: formatValue(value, null, ctx) || "—" })));
  }
  if (entries.length > limit) dl.append(h("div", { class: "t-field t-more" }, h("dt", { text: `+${entries.length - limit} more` })));
  return dl;
}

/** The rendering context for one activity (`now` fixed for a past point in time). `fit`
 *  (set by the Dynamic Island's compact and minimal regions) makes texts fit their region;
 *  `short` asks values for their short form. */
export function context(activity, template, { at = null } = {}) {
  return {
    state: activity.content_state ?? {},
    attributes: activity.attributes ?? {},
    activity,
    template,
    dates: template.dates ?? "apple_reference", // what a phone with the default decoding shows
    live: at === null,
    now: at === null ? fmt.nowSeconds : () => at,
  };
}
