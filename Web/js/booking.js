// Booking lookup (#/booking/<id>[?at=<RFC 3339>]): every activity and event of one booking in
// time order, what each event did to the lock screen, and the lock-screen card as it was at any
// chosen instant. Every rule is the server's: each event's effect and what it met and changed,
// the changes time alone made, and the activities at a past instant (`?at=`) come from its
// replay of the stored events through its own state engine. This page only draws them.

import { h, clear } from "./dom.js";
import { getJSON, NotFound, staleText, waitingText, HISTORY_TIMEOUT_MS, WAITING_AFTER_MS } from "./api.js";
import { loadTemplate, cachedTemplate, onTemplateChange } from "./templates.js";
import { lockScreen, islands, badges, diagnostics, displayName, bookingHref } from "./card.js";
import { icon } from "./icons.js";
import * as fmt from "./format.js";

const REFRESH_MS = 5000;
// Events asked for a page at a time (the server's default page): "Load more" asks for the next.
const PAGE = 500;
const LATE_AFTER = 1; // seconds of slack between arrivals before an event counts as reported late
// A deadline further away than this is re-checked then (a sleeping laptop or a throttled tab
// fires timers late, and setTimeout cannot wait beyond 2^31 ms anyway).
const MAX_DEADLINE_WAIT_MS = 3600 * 1000;
// The slider asks the server for its instant once it rests this long (dragging sends no flood).
const SETTLE_MS = 80;
// Past instants kept, per booking and data: the server's answer for one never changes until
// the booking's events do.
const CACHE_LIMIT = 300;

// The server's time-driven transitions.
const TRANSITION = {
  stale: "Stale: its stale date passed",
  ended: "Ended by the system (8 h limit)",
  dismissed: "Removed from the lock screen",
};

/** The server's effect words as a sentence of the page: capitalised. */
const sentence = (text) => text.charAt(0).toUpperCase() + text.slice(1);

/** An effect as a class of row and tick: applied, ignored, failed, or info (not replayed). */
function effectClass(effect) {
  if (!effect) return "info";
  if (effect.result === "applied") return "applied";
  return effect.why === "failed" ? "failed" : "ignored";
}

/** An event of the read API with its times as Unix seconds, for drawing. */
function eventView(e, index) {
  return {
    index,
    raw: e,
    t: fmt.toSeconds(e.occurred_at),
    activityId: e.activity_id ?? null,
    staleDate: fmt.toSeconds(e.stale_date),
    dismissalDate: fmt.toSeconds(e.dismissal_date),
    dismissalPolicy: e.dismissal_policy ?? null,
    contentState: e.content_state && typeof e.content_state === "object" ? e.content_state : null,
    fingerprint: e.token_fingerprint ?? null,
    push: e.type === "push.sent"
      ? { kind: e.event, status: Number(e.status ?? 0), reason: e.reason ?? null, latencyMs: Number(e.latency_ms ?? 0), priority: e.priority ?? null }
      : null,
    effect: e.effect ?? null,
    lockScreen: e.lock_screen ?? null,
  };
}

/** The key of an instant in `?at=` and in the cache: RFC 3339 to the millisecond, as links write it. */
const instantKey = (t) => new Date(Math.round(t * 1000)).toISOString();

export class BookingView {
  constructor({ root }) {
    this.root = root;
    this.id = null;
    this.timer = null;
    this.deadlineTimer = null;
    this.settleTimer = null;
    this.seq = 0;
    this.past = new Map(); // instant key → the server's answer at it
    this.waitingSince = null; // when the history read in flight was asked for (ms), if one is
    this.waitTicker = null;
    // A template that failed and loaded on a later try: the cards are drawn again with it now.
    onTemplateChange(() => this.templatesChanged());
  }

  /** Shows booking `id`, at instant `at` (Unix seconds) or following now when null. */
  async show(id, at) {
    const same = id === this.id && this.data;
    this.id = id;
    this.at = at;
    this.live = at === null;
    if (!same) {
      this.data = null;
      this.eventsWanted = PAGE; // grows with "Load more"; every refresh fetches that many again
      this.loading = h("div", { class: "loading", text: `Loading booking ${id}…` });
      clear(this.root).append(this.loading);
    } else if (this.cardsAt) {
      // The same booking at another instant (?at= changed): load() redraws only when the data
      // changed, so draw the new instant now.
      this.renderSnapshot();
      this.markTimeline();
    }
    await this.load();
  }

  hide() {
    this.waiting(false);
    clearTimeout(this.timer);
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.settleTimer);
    this.seq++;
    this.id = null;
    this.data = null;
  }

  async load() {
    clearTimeout(this.timer);
    const seq = ++this.seq;
    const id = this.id;
    this.waiting(true);
    try {
      const data = await this.fetchPages(id);
      if (seq !== this.seq) return;
      this.waiting(false);
      const templates = new Map();
      for (const a of data.activities ?? []) templates.set(a.attributes_type, await loadTemplate(a.attributes_type));
      for (const e of data.events ?? []) {
        if (e.attributes_type && !templates.has(e.attributes_type)) templates.set(e.attributes_type, await loadTemplate(e.attributes_type));
      }
      if (seq !== this.seq) return;
      const events = data.events ?? [];
      const sig = JSON.stringify([events.length, events.at(-1)?.received_at, data.activities, data.priority10_budget, data.not_replayed, data.next_cursor]);
      this.fetchedAt = fmt.nowSeconds();
      this.lastError = null;
      if (!this.data || sig !== this.sig) {
        this.data = data;
        this.sig = sig;
        this.templates = templates;
        this.templateSig = templateSig(templates);
        this.past = new Map(); // new events may change any past instant
        this.prepare();
        this.render();
        this.scheduleDeadline();
      } else if (templateSig(templates) !== this.templateSig) {
        this.templatesChanged(); // a template that had failed loaded meanwhile
      } else if (this.fetchedAt >= this.nextDeadline) {
        this.timeMoved(); // the deadline's timer was late (a background tab): catch up now
      } else if (this.live) {
        this.renderSnapshot();
      }
      if (this.day !== fmt.today()) this.newDay();
      this.showStatus();
    } catch (err) {
      if (seq !== this.seq) return;
      this.waiting(false);
      if (err instanceof NotFound) {
        // Not a booking id: perhaps an activity id (the search box takes either).
        const booking = await bookingOfActivity(id);
        if (seq !== this.seq) return;
        if (booking !== null && booking !== id) {
          const at = this.live ? null : this.at;
          history.replaceState(null, "", bookingHref(booking, at));
          document.title = `Booking ${booking} · Live Activity Monitor`;
          this.show(booking, at);
          return;
        }
        this.data = null;
        clear(this.root).append(notFound(id));
        return;
      }
      console.error(err);
      if (!this.data) clear(this.root).append(h("div", { class: "empty", text: `Cannot load booking ${id}: ${err.message}` }));
      else {
        // The last answer stays on screen, marked stale.
        this.lastError = err;
        this.showStatus();
      }
    }
    if (seq === this.seq) this.timer = setTimeout(() => this.load(), REFRESH_MS);
  }

  /** When the data shown was fetched; that a refresh is still waiting for the server (a history
   *  read may take a while: not stale yet); or why the data may be out of date (it failed). */
  showStatus() {
    const waited = this.waitingSince === null ? 0 : Date.now() - this.waitingSince;
    const waiting = waited >= WAITING_AFTER_MS;
    if (this.loading?.isConnected) {
      this.loading.textContent = `Loading booking ${this.id}…${waiting ? ` waiting ${Math.floor(waited / 1000)} s for the server` : ""}`;
    }
    if (!this.status) return;
    const err = this.lastError;
    this.status.classList.toggle("status-error", Boolean(err));
    this.status.classList.toggle("status-waiting", !err && waiting);
    this.status.textContent = err ? staleText(err, this.fetchedAt)
      : waiting ? waitingText(waited, this.fetchedAt, HISTORY_TIMEOUT_MS)
        : `Updated ${fmt.clock(this.fetchedAt, { withSeconds: true })}`;
  }

  /** Starts (`on`) or ends the wait for a history read, shown once it lasts (`showStatus`). */
  waiting(on) {
    clearInterval(this.waitTicker);
    this.waitTicker = null;
    this.waitingSince = on ? Date.now() : null;
    if (on) this.waitTicker = setInterval(() => this.showStatus(), 1000);
  }

  /** Draws the cards again with the templates known now (one that had failed has loaded). */
  templatesChanged() {
    if (!this.data || !this.templates) return;
    for (const type of this.templates.keys()) this.templates.set(type, cachedTemplate(type) ?? this.templates.get(type));
    this.templateSig = templateSig(this.templates);
    this.renderSnapshot();
  }

  /** The booking with its first `this.eventsWanted` events (or all, if fewer): page after page,
   *  as the server gives them (a large booking is never fetched whole at once). */
  async fetchPages(id) {
    const base = `api/bookings/${encodeURIComponent(id)}?limit=${PAGE}`;
    const data = await getJSON(base, { timeoutMs: HISTORY_TIMEOUT_MS });
    let events = data.events ?? [];
    while (data.next_cursor && events.length < this.eventsWanted) {
      const more = await getJSON(`${base}&cursor=${encodeURIComponent(data.next_cursor)}`, { timeoutMs: HISTORY_TIMEOUT_MS });
      events = events.concat(more.events ?? []);
      data.next_cursor = more.next_cursor;
    }
    data.events = events;
    return data;
  }

  /** Asks for the next page of events. */
  loadMore() {
    this.eventsWanted = (this.data?.events?.length ?? 0) + PAGE;
    this.load();
  }

  /** The events and the server's transitions, with their times as Unix seconds. */
  prepare() {
    const events = (this.data.events ?? []).map(eventView).filter((e) => e.t !== null).map((e, i) => ({ ...e, index: i }));
    this.events = events;
    this.transitions = (this.data.transitions ?? [])
      .map((x) => ({ t: fmt.toSeconds(x.at), activityId: x.activity_id, kind: x.kind, text: TRANSITION[x.kind] ?? x.kind }))
      .filter((x) => x.t !== null);
    const now = this.passTime();
    // Activities in start order; the server's list first, then any only the events know.
    const ids = [];
    for (const a of this.data.activities ?? []) ids.push(a.activity_id);
    for (const e of events) if (e.activityId && !ids.includes(e.activityId)) ids.push(e.activityId);
    this.activityIds = ids;
    // An event is late when it reached the server after an event that happened after it.
    this.lateIndexes = new Set();
    let earliestLater = Infinity;
    for (let i = events.length - 1; i >= 0; i--) {
      const received = fmt.toSeconds(events[i].raw.received_at);
      if (received === null) continue;
      if (received > earliestLater + LATE_AFTER) this.lateIndexes.add(events[i].index);
      earliestLater = Math.min(earliestLater, received);
    }
    const first = events.length ? events[0].t : now;
    const last = Math.max(events.length ? events[events.length - 1].t : now, ...this.derived.map((d) => d.t));
    const stillVisible = (this.data.activities ?? []).some((a) => a.state !== "dismissed");
    this.range = { min: Math.floor(first), max: Math.ceil(stillVisible ? Math.max(now, last) : last + 60), followsNow: stillVisible };
  }

  /**
   * The server's transitions that the browser's clock has passed (the timeline's time-driven
   * rows), and the next instant at which that list changes or an event stamped ahead of now is
   * reached. Returns now.
   */
  passTime() {
    const now = fmt.nowSeconds();
    this.derived = this.transitions.filter((d) => d.t <= now);
    let next = Infinity;
    for (const x of [...this.transitions, ...this.events]) if (x.t > now && x.t < next) next = x.t;
    this.nextDeadline = next;
    return now;
  }

  /** Re-renders the timeline when the next time-driven transition is due (no refetch needed:
   *  the events already say when it comes). */
  scheduleDeadline() {
    clearTimeout(this.deadlineTimer);
    if (!Number.isFinite(this.nextDeadline)) return;
    // A few ms late, so that the clock at wake-up is at or past the deadline.
    const wait = Math.min(MAX_DEADLINE_WAIT_MS, Math.max(0, (this.nextDeadline - fmt.nowSeconds()) * 1000) + 20);
    const data = this.data;
    this.deadlineTimer = setTimeout(() => {
      if (data !== this.data) return; // another booking, or hidden
      if (fmt.nowSeconds() >= this.nextDeadline) this.timeMoved();
      else this.scheduleDeadline();
    }, wait);
  }

  /** Time passed a deadline with the same data: the new rows, the card following now, the marks. */
  timeMoved() {
    this.passTime();
    this.fillTimeline();
    if (this.live) this.renderSnapshot();
    this.markTimeline();
    this.scheduleDeadline();
  }

  /** The local day changed with the same data: every time `fmt.clock` wrote as today's ("14:32")
   *  now needs its day ("Nov 29 14:32"): the timeline's rows and the cards. */
  newDay() {
    this.day = fmt.today();
    this.fillTimeline();
    this.renderSnapshot();
    this.markTimeline();
  }

  /** The instant shown: the chosen one, or now (clamped to the timeline) when following live. */
  instant() {
    if (this.live) return fmt.nowSeconds();
    return this.at;
  }

  select(t, { live = false } = {}) {
    this.live = live;
    this.at = live ? null : t;
    const hash = live ? bookingHref(this.id) : bookingHref(this.id, t);
    history.replaceState(null, "", hash);
    this.renderSnapshot();
    this.markTimeline();
  }

  render() {
    this.day = fmt.today();
    const d = this.data;
    const root = clear(this.root);
    const tz = Intl.DateTimeFormat().resolvedOptions().timeZone;
    this.status = h("p", { class: "status view-status", attrs: { role: "status" } });
    root.append(
      h("div", { class: "booking-head" },
        h("a", { class: "back", attrs: { href: "#/" } }, "← All activities"),
        h("h1", {}, "Booking ", h("span", { class: "mono", attrs: { dir: "auto" }, text: d.booking_id })),
        h("p", { class: "muted", text: `${this.activityIds.length} activit${this.activityIds.length === 1 ? "y" : "ies"} · ${this.events.length} event${this.events.length === 1 ? "" : "s"} · times in ${tz}` }),
        this.status));
    this.showStatus();

    // Time chooser
    this.slider = h("input", {
      class: "time-slider",
      attrs: { type: "range", min: this.range.min, max: this.range.max, step: 1, "aria-label": "Point in time" },
      on: { input: () => this.select(Number(this.slider.value)) },
    });
    // A text field in the page's own format ("2026-11-29 14:32:05", local, 24-hour): a
    // datetime-local control follows the browser's locale (12-hour here) and is too wide for a phone.
    const pick = () => {
      const t = parseLocal(this.timeInput.value);
      this.timeInput.setAttribute("aria-invalid", String(t === null));
      if (t !== null) this.select(t);
    };
    this.timeInput = h("input", {
      class: "time-input tabular",
      attrs: { type: "text", "aria-label": "Exact time (YYYY-MM-DD hh:mm:ss, 24-hour, local)", title: "YYYY-MM-DD hh:mm:ss (24-hour, local time)",
        placeholder: "YYYY-MM-DD hh:mm:ss", autocomplete: "off", spellcheck: "false", enterkeyhint: "go" },
      on: { change: pick, keydown: (e) => { if (e.key === "Enter") pick(); } },
    });
    const ticks = h("div", { class: "ticks", attrs: { "aria-hidden": "true" } });
    this.ticks = [];
    for (const ev of this.events) {
      const tick = h("span", { class: ["tick", `tick-${effectClass(ev.effect)}`] });
      this.ticks.push({ el: tick, t: ev.t });
      ticks.append(tick);
    }
    this.rangeEnd = h("span", { text: fmt.fullDate(this.range.max) });
    this.placeTicks();
    this.instantLabel = h("div", { class: "instant" });
    const step = (dir) => () => {
      const t = this.instant();
      const target = dir < 0 ? [...this.events].reverse().find((e) => e.t < t) : this.events.find((e) => e.t > t);
      if (target) this.select(target.t);
    };
    const controls = h("div", { class: "time-controls" },
      h("button", { attrs: { type: "button", title: "Previous event" }, class: "ghost", on: { click: step(-1) }, text: "◀ Event" }),
      h("button", { attrs: { type: "button", title: "Next event" }, class: "ghost", on: { click: step(1) }, text: "Event ▶" }),
      this.timeInput,
      h("button", { attrs: { type: "button", title: "Follow the present" }, class: "ghost", on: { click: () => this.select(null, { live: true }) }, text: "Now" }));
    this.permalink = h("a", { class: "permalink", attrs: { href: "#" }, text: "Link to this moment" });
    this.cardsAt = h("div", { class: "snapshot-cards" });

    const snapshot = h("section", { class: "snapshot", attrs: { "aria-label": "Lock screen at the chosen time" } },
      h("h2", {}, "Lock screen at ", this.instantLabel),
      h("div", { class: "slider-wrap" }, ticks, this.slider),
      h("div", { class: "range-labels muted" }, h("span", { text: fmt.fullDate(this.range.min) }), this.permalink, this.rangeEnd),
      controls, this.cardsAt);

    this.list = h("ol", { class: "events" });
    this.fillTimeline();
    const more = d.next_cursor
      ? h("button", { class: ["ghost", "load-more"], attrs: { type: "button" }, on: { click: () => this.loadMore() }, text: `Load ${PAGE} more events` })
      : null;
    const timeline = h("section", { class: "timeline", attrs: { "aria-label": "Events" } },
      h("h2", { text: `Timeline (${this.events.length}${d.next_cursor ? " first" : ""} event${this.events.length === 1 ? "" : "s"})` }), this.list,
      ...(more ? [more] : []));

    root.append(h("div", { class: "booking-grid" }, snapshot, timeline));
    this.renderSnapshot();
    this.markTimeline();
  }

  /** (Re)builds the timeline's rows: the events and the transitions time caused until now. */
  fillTimeline() {
    const rows = document.createDocumentFragment();
    this.rows = [];
    this.lastStale = new Map();
    for (const item of this.timelineItems()) {
      const row = item.derived ? this.derivedRow(item) : this.eventRow(item);
      this.rows.push({ row, item });
      rows.append(row);
    }
    clear(this.list).append(rows);
  }

  placeTicks() {
    const span = Math.max(1, this.range.max - this.range.min);
    for (const { el, t } of this.ticks) el.style.left = `${(((t - this.range.min) / span) * 100).toFixed(2)}%`;
  }

  /** Following now while an activity is still visible, the timeline ends now: move its end
   *  (prepare() sets the range only when the data changes). */
  extendRange(t) {
    const max = Math.ceil(t);
    if (!this.range.followsNow || max <= this.range.max) return;
    this.range.max = max;
    this.slider.max = String(max);
    this.rangeEnd.textContent = fmt.fullDate(max);
    this.placeTicks();
  }

  timelineItems() {
    const items = this.events.map((ev) => ({ t: ev.t, ev }));
    for (const d of this.derived) items.push({ t: d.t, derived: d });
    // Stable: events keep server order; a derived transition goes after the events of its instant.
    return items.map((x, i) => ({ ...x, order: i })).sort((a, b) => a.t - b.t || (a.derived ? 1 : 0) - (b.derived ? 1 : 0) || a.order - b.order);
  }

  eventRow({ ev }) {
    const e = ev.raw;
    const multi = this.activityIds.length > 1;
    const kind = eventKind(e);
    const effect = effectClass(ev.effect);
    const why = ev.effect?.why ?? null;
    const before = ev.lockScreen?.before ?? null;
    const result = [];
    const details = [];
    if (ev.push) {
      const p = ev.push;
      const ok = p.status === 200;
      result.push(h("span", { class: ["pill", ok ? "ok" : "bad"], text: p.status === 0 ? "no answer" : `${p.status}${p.reason ? ` ${p.reason}` : ""}` }));
      result.push(h("span", { class: "pill tabular", text: fmt.latency(p.latencyMs) }));
      if (p.priority !== null) result.push(h("span", { class: ["pill", p.priority === 10 ? "p10" : null], text: `priority ${p.priority}` }));
      if (ev.fingerprint) details.push(h("span", { class: "detail" }, "to token ", h("span", { class: "mono", text: ev.fingerprint })));
      if (typeof e.channel_id === "string") details.push(h("span", { class: "detail" }, "to channel ", h("span", { class: "mono", text: e.channel_id })));
    }
    if (e.type === "activity.token_updated" && ev.fingerprint) {
      // The token it replaced: the one the server's replay found current just before it.
      const from = effect === "applied" && before?.token_fingerprint && before.token_fingerprint !== ev.fingerprint ? before.token_fingerprint : null;
      details.push(h("span", { class: "detail" }, "token ", from ? h("span", { class: "mono", text: from }) : null,
        from ? " → " : "", h("span", { class: "mono", text: ev.fingerprint })));
    }
    if (e.type === "activity.started" && ev.fingerprint) {
      details.push(h("span", { class: "detail" }, "token ", h("span", { class: "mono", text: ev.fingerprint })));
    }
    if (why) {
      // The server's words for the effect; the page adds only what it met, as data.
      let text = sentence(ev.effect.text ?? why);
      if (why === "superseded_token" && e.type !== "activity.token_updated" && before?.token_fingerprint) text += ` (current: ${before.token_fingerprint})`;
      if (why === "out_of_order" && before?.content_timestamp) {
        text += ` (the content shown is stamped ${fmt.clock(fmt.toSeconds(before.content_timestamp), { withSeconds: true })})`;
      }
      details.push(h("span", { class: ["why", `why-${effect}`], text }));
    } else if (ev.effect && (ev.effect.warnings?.length || ev.effect.delivery || ev.effect.start)) {
      // Applied, with something to say: warnings, what the phone's report showed of it, or
      // whether the start push started its activity — all in the server's words.
      const bad = ev.effect.warnings?.length || ev.effect.delivery === "missed" || ev.effect.start === "not_started";
      details.push(h("span", { class: ["why", bad ? "why-warning" : "why-info"], text: sentence(ev.effect.text) }));
    } else if (!ev.effect) {
      details.push(h("span", { class: "why why-info", text: "Not replayed: its activity's start is no longer stored" }));
    } else if (e.type === "push.sent" && e.event === "start" && !ev.activityId) {
      details.push(h("span", { class: "why why-info", text: "Push-to-start accepted: the activity begins when the device reports it started" }));
    }
    const invalidated = ev.lockScreen?.token_invalidated;
    if (invalidated) details.push(h("span", { class: "why why-failed", text: `Token invalidated by APNs (${invalidated})` }));
    const changes = ev.lockScreen?.content_changes ?? [];
    if (changes.length) {
      details.push(h("span", { class: "diff" }, changes.map((c) => h("span", { class: "change" },
        h("bdi", { class: "key", text: c.key }), " ",
        c.from === undefined ? null : h("bdi", { class: "from", text: fmt.jsonValue(c.from) }),
        c.from === undefined ? null : " → ",
        c.to === undefined ? h("span", { class: "to muted", text: "removed" }) : h("bdi", { class: "to", text: fmt.jsonValue(c.to) })))));
    } else if (ev.contentState && effect !== "applied") {
      details.push(h("span", { class: "diff diff-ignored" }, Object.entries(ev.contentState).map(([k, v]) => h("span", { class: "change" }, h("bdi", { class: "key", text: k }), " ", h("bdi", { class: "to", text: fmt.jsonValue(v) })))));
    }
    const staleKey = ev.activityId ?? "";
    const staleChanged = this.lastStale.get(staleKey) !== ev.staleDate;
    if (["activity.started", "activity.updated", "push.sent"].includes(e.type) && ev.contentState) this.lastStale.set(staleKey, ev.staleDate);
    if (ev.staleDate !== null && staleChanged && ["activity.started", "activity.updated", "push.sent"].includes(e.type)) {
      details.push(h("span", { class: "detail", text: `stale date ${fmt.clock(ev.staleDate, { withSeconds: true })}` }));
    }
    if (ev.dismissalDate !== null || ev.dismissalPolicy) {
      // A push's end carries a date and no policy: "dismissal at 02:17:29", one space.
      const words = ["dismissal", ev.dismissalPolicy, ev.dismissalDate !== null ? `at ${fmt.clock(ev.dismissalDate, { withSeconds: true })}` : null];
      details.push(h("span", { class: "detail", text: words.filter(Boolean).join(" ") }));
    }
    if (e.alert && typeof e.alert === "object") {
      details.push(h("span", { class: "detail" }, "alert: ", h("bdi", { text: [e.alert.title, e.alert.body].filter((x) => typeof x === "string").join(" — ") })));
    }
    if (this.lateIndexes.has(ev.index)) {
      const received = fmt.toSeconds(e.received_at);
      details.push(h("span", { class: "detail late", title: `received ${fmt.fullDate(received)}`, text: `reported late: after later events (${fmt.duration(received - ev.t)} after it happened)` }));
    }
    const apsTimestamp = fmt.toSeconds(e.timestamp);
    if (ev.push && apsTimestamp !== null && apsTimestamp !== ev.t) {
      details.push(h("span", { class: "detail", text: `aps timestamp ${fmt.clock(apsTimestamp, { withSeconds: true })}` }));
    }

    return h("li", {
      class: ["ev", `ev-${kind.cls}`, `effect-${effect}`],
      data: { index: ev.index, t: ev.t, type: e.type, activityId: ev.activityId ?? "" },
    }, h("button", {
      class: "ev-btn",
      attrs: { type: "button", title: "Show the lock screen right after this event" },
      on: { click: () => this.select(ev.t) },
    },
      h("span", { class: ["ev-icon", `ev-icon-${kind.cls}`] }, icon(kind.icon)),
      h("span", { class: "ev-main" },
        h("span", { class: "ev-line" },
          h("time", { class: "ev-time tabular", attrs: { datetime: new Date(ev.t * 1000).toISOString() }, text: fmt.clock(ev.t, { withSeconds: true }) }),
          h("span", { class: "ev-kind", text: kind.label }),
          multi && ev.activityId ? h("span", { class: "ev-activity mono", attrs: { dir: "auto" }, title: ev.activityId, text: ev.activityId }) : null,
          h("span", { class: "ev-result" }, result)),
        details.length ? h("span", { class: "ev-details" }, details) : null)));
  }

  derivedRow({ derived }) {
    return h("li", { class: ["ev", "ev-derived", `ev-${derived.kind}`], data: { t: derived.t, type: `derived.${derived.kind}`, activityId: derived.activityId } },
      h("button", { class: "ev-btn", attrs: { type: "button" }, on: { click: () => this.select(derived.t) } },
        h("span", { class: "ev-icon ev-icon-derived" }, icon("clock")),
        h("span", { class: "ev-main" },
          h("span", { class: "ev-line" },
            h("time", { class: "ev-time tabular", text: fmt.clock(derived.t, { withSeconds: true }) }),
            h("span", { class: "ev-kind", text: derived.text }),
            this.activityIds.length > 1 ? h("span", { class: "ev-activity mono", attrs: { dir: "auto" }, text: derived.activityId }) : null))));
  }

  /** The cards at the instant shown: following now, the server's current activities; at a
   *  past instant, the server's answer for it (`?at=`), asked for once the slider rests. */
  renderSnapshot() {
    if (!this.cardsAt) return;
    const t = this.instant();
    if (this.live) this.extendRange(t);
    this.instantLabel.textContent = this.live ? `now (${fmt.clock(t, { withSeconds: true })})` : fmt.fullDate(t);
    this.instantLabel.dataset.t = String(t);
    this.slider.value = String(Math.min(this.range.max, Math.max(this.range.min, Math.round(t))));
    // Not while someone types in it: a refresh would overwrite what they typed.
    if (document.activeElement !== this.timeInput) {
      this.timeInput.value = fmt.fullDate(t);
      this.timeInput.removeAttribute("aria-invalid");
    }
    // To the millisecond: event times have them, and a link cut to the second opens before the event.
    this.permalink.setAttribute("href", bookingHref(this.id, t));
    clearTimeout(this.settleTimer);
    if (this.live) {
      this.wantedInstant = null;
      this.drawCards(this.data, t);
      return;
    }
    const key = instantKey(t);
    this.wantedInstant = key;
    const known = this.past.get(key);
    if (known) {
      this.drawCards(known, t);
      return;
    }
    // The cards drawn stay, dimmed, until the server answers for the new instant.
    this.cardsAt.classList.add("snapshot-waiting");
    const first = !this.cardsAt.hasChildNodes();
    this.settleTimer = setTimeout(() => this.fetchInstant(key, t), first ? 0 : SETTLE_MS);
  }

  async fetchInstant(key, t) {
    const data = this.data;
    try {
      const answer = await getJSON(`api/bookings/${encodeURIComponent(this.id)}?at=${encodeURIComponent(key)}`, { timeoutMs: HISTORY_TIMEOUT_MS });
      for (const a of answer.activities ?? []) {
        if (!this.templates.has(a.attributes_type)) this.templates.set(a.attributes_type, await loadTemplate(a.attributes_type));
      }
      if (data !== this.data) return; // another booking, or new events: that render asks again
      if (this.past.size >= CACHE_LIMIT) this.past.delete(this.past.keys().next().value);
      this.past.set(key, answer);
      if (this.wantedInstant === key) this.drawCards(answer, t);
    } catch (err) {
      if (data !== this.data || this.wantedInstant !== key) return;
      console.error(err);
      this.cardsAt.classList.remove("snapshot-waiting");
      clear(this.cardsAt).append(h("div", { class: "empty", text: `Cannot load the lock screen at ${fmt.fullDate(t)}: ${err.message}` }));
    }
  }

  /** One card per activity of the booking, from `answer` (the booking's answer now, or at `t`). */
  drawCards(answer, t) {
    this.cardsAt.classList.remove("snapshot-waiting");
    const liveClock = this.live ? null : t;
    const budget = Number.isInteger(this.data.priority10_budget) ? this.data.priority10_budget : null;
    const shown = new Map((answer.activities ?? []).map((a) => [a.activity_id, a]));
    const current = new Map((this.data.activities ?? []).map((a) => [a.activity_id, a]));
    const pruned = new Set(this.live ? [] : answer.not_replayed ?? []);
    const ids = [...this.activityIds, ...[...shown.keys()].filter((id) => !this.activityIds.includes(id))];
    const cards = [];
    for (const id of ids) {
      const a = shown.get(id);
      const server = current.get(id);
      if (!a && pruned.has(id) && server) {
        // The server cannot replay it: its start is no longer among the stored events.
        const template = this.templates.get(server.attributes_type);
        if (!template) continue;
        cards.push(h("div", { class: ["snap", `snap-${server.state}`], data: { activityId: id, state: server.state } },
          h("div", { class: "snap-title" }, h("strong", { attrs: { dir: "auto" }, text: displayName(server, template) }), " ", h("span", { class: "mono muted", attrs: { dir: "auto" }, text: id })),
          h("p", { class: "replay-note", text: "Its start is no longer among the stored events (pruned): this is the server's current card, not the card at this instant." }),
          badges(server, { budget }), lockScreen(server, template), diagnostics(server, { bookingLink: false, budget })));
        continue;
      }
      if (!a) {
        cards.push(h("div", { class: "snap", data: { activityId: id, state: "none" } },
          h("div", { class: "snap-title" }, h("span", { class: "mono", attrs: { dir: "auto" }, text: id })),
          h("div", { class: "ls-card ls-none", text: "Not started yet at this time" })));
        continue;
      }
      const template = this.templates.get(a.attributes_type);
      if (!template) continue;
      cards.push(h("div", { class: ["snap", `snap-${a.state}`], data: { activityId: id, state: a.state } },
        h("div", { class: "snap-title" }, h("strong", { attrs: { dir: "auto" }, text: displayName(a, template) }), " ", h("span", { class: "mono muted", attrs: { dir: "auto" }, text: id })),
        badges(a, { at: t, budget }),
        a.state === "dismissed" ? h("div", { class: "gone", text: "No longer on the lock screen — this is what it showed last" }) : null,
        a.state === "pending"
          ? h("div", { class: "gone", text: `Scheduled: not on the lock screen before ${fmt.clock(fmt.toSeconds(a.start_date))} — this is what it will show then` })
          : null,
        lockScreen(a, template, { at: liveClock }),
        islands(a, template, { at: liveClock }),
        diagnostics(a, { at: t, bookingLink: false, budget })));
    }
    clear(this.cardsAt).append(...cards);
  }

  markTimeline() {
    if (!this.rows) return;
    const t = this.instant();
    let current = null;
    for (const { row, item } of this.rows) {
      const past = item.t <= t;
      row.classList.toggle("future", !past);
      row.classList.remove("current");
      if (past) current = row;
    }
    current?.classList.add("current");
  }
}

function eventKind(e) {
  switch (e.type) {
    case "activity.started": return { label: e.source === "push_to_start" ? "Started (push-to-start)" : "Started", cls: "started", icon: "play.fill" };
    case "activity.updated": return { label: "Updated by the app", cls: "updated", icon: "bolt.fill" };
    case "activity.token_updated": return { label: "Push token updated", cls: "token", icon: "key.fill" };
    case "activity.stale": return { label: "Stale (reported by the device)", cls: "stale", icon: "clock" };
    case "activity.ended": return { label: "Ended by the app", cls: "ended", icon: "stop.fill" };
    case "activity.dismissed": return { label: "Dismissed", cls: "dismissed", icon: "xmark" };
    case "push.sent":
      // A broadcast (iOS 18): one push to a channel, taken by every subscribed activity.
      if (e.channel_id) return { label: `Broadcast ${e.event ?? ""}`.trim(), cls: "push", icon: "antenna.radiowaves.left.and.right" };
      return { label: `Push ${e.event ?? ""}`.trim(), cls: "push", icon: "antenna.radiowaves.left.and.right" };
    default: return { label: String(e.type), cls: "other", icon: "info.circle" };
  }
}

/** Which template each type is drawn with (their revisions): a template loaded at last differs. */
function templateSig(templates) {
  return JSON.stringify([...templates].map(([type, t]) => [type, t?.revision ?? null]));
}

/** Unix seconds from a local time as `fmt.fullDate` writes it ("2026-11-29 14:32:05"; the
 *  seconds may be left out), or null when it is not one. */
function parseLocal(text) {
  const m = /^\s*(\d{4})-(\d{1,2})-(\d{1,2})[ T]+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*$/.exec(text);
  if (!m) return null;
  const [y, mo, d, hh, mm, ss] = m.slice(1).map((x) => Number(x ?? 0));
  const date = new Date(y, mo - 1, d, hh, mm, ss);
  // Date rolls 25:00 or Feb 30 over into the next day: refuse what does not read back the same.
  if (date.getFullYear() !== y || date.getMonth() !== mo - 1 || date.getDate() !== d || date.getHours() !== hh || date.getMinutes() !== mm) return null;
  return date.getTime() / 1000;
}

/** The booking of activity `id` (`GET /api/activities/{id}`), or null when there is none. */
async function bookingOfActivity(id) {
  try {
    const activity = await getJSON(`api/activities/${encodeURIComponent(id)}`, { timeoutMs: HISTORY_TIMEOUT_MS });
    return typeof activity?.booking_id === "string" && activity.booking_id ? activity.booking_id : null;
  } catch (err) {
    if (!(err instanceof NotFound)) console.warn(`activity ${id}: ${err.message}`);
    return null;
  }
}

function notFound(id) {
  return h("div", { class: "not-found", attrs: { role: "alert" } },
    h("h1", { text: "Booking not found" }),
    h("p", {}, "No booking or activity with the id ", h("span", { class: "mono", attrs: { dir: "auto" }, text: id }), " is known to this monitor."),
    h("p", { class: "muted", text: "Ids are case-sensitive here (the search box finds them by their start in any case): check the id, or whether its events were ever ingested or already pruned." }),
    h("a", { class: "back", attrs: { href: "#/" }, text: "← All activities" }));
}
