// Booking lookup (#/booking/<id>[?at=<RFC 3339>]): every activity and event of one booking in
// time order, what each event did to the lock screen, and the lock-screen card as it was at any
// chosen instant — replayed here from the events with the server's rules (lockscreen.js).

import { h, clear } from "./dom.js";
import { getJSON, NotFound } from "./api.js";
import { loadTemplate } from "./templates.js";
import { lockScreen, islands, badges, diagnostics, displayName, bookingHref } from "./card.js";
import { icon } from "./icons.js";
import { replay, toActivity, normaliseEvent, p10Budget, MAX_ACTIVE, MAX_LIFETIME } from "./lockscreen.js";
import * as fmt from "./format.js";

const REFRESH_MS = 5000;
const LATE_AFTER = 1; // seconds of slack between arrivals before an event counts as reported late
// A deadline further away than this is re-checked then (a sleeping laptop or a throttled tab
// fires timers late, and setTimeout cannot wait beyond 2^31 ms anyway).
const MAX_DEADLINE_WAIT_MS = 3600 * 1000;
// Browser and server clocks differ a little: a state that flips this close to now may be read
// differently by each without either being wrong.
const CLOCK_SLACK = 10;

const WHY = {
  out_of_order: "Ignored: not newer than the content shown",
  superseded_token: "No effect: sent to a superseded token",
  ended: "No effect: the activity had already ended",
  dismissed: "No effect: the activity was already dismissed",
  unknown_activity: "No effect: no such activity was started",
  push_to_start: "Push-to-start accepted: the activity begins when the device reports it started",
  not_delivered: "Not delivered",
  same_token: "Same token as before",
  already_started: "Already started",
  already_stale: "Already stale",
};

export class BookingView {
  constructor({ root }) {
    this.root = root;
    this.id = null;
    this.timer = null;
    this.deadlineTimer = null;
    this.seq = 0;
  }

  /** Shows booking `id`, at instant `at` (Unix seconds) or following now when null. */
  async show(id, at) {
    const same = id === this.id && this.data;
    this.id = id;
    this.at = at;
    this.count = Infinity;
    this.live = at === null;
    if (!same) {
      this.data = null;
      clear(this.root).append(h("div", { class: "loading", text: `Loading booking ${id}…` }));
    } else if (this.cardsAt) {
      // The same booking at another instant (?at= changed): load() redraws only when the data
      // changed, so draw the new instant now.
      this.renderSnapshot();
      this.markTimeline();
    }
    await this.load();
  }

  hide() {
    clearTimeout(this.timer);
    clearTimeout(this.deadlineTimer);
    this.seq++;
    this.id = null;
    this.data = null;
  }

  async load() {
    clearTimeout(this.timer);
    const seq = ++this.seq;
    const id = this.id;
    try {
      const data = await getJSON(`api/bookings/${encodeURIComponent(id)}`);
      if (seq !== this.seq) return;
      const templates = new Map();
      for (const a of data.activities ?? []) templates.set(a.attributes_type, await loadTemplate(a.attributes_type));
      for (const e of data.events ?? []) {
        if (e.attributes_type && !templates.has(e.attributes_type)) templates.set(e.attributes_type, await loadTemplate(e.attributes_type));
      }
      if (seq !== this.seq) return;
      const sig = JSON.stringify([data.events?.length, data.activities, data.priority10_budget]);
      this.fetchedAt = fmt.nowSeconds();
      if (!this.data || sig !== this.sig) {
        this.data = data;
        this.sig = sig;
        this.templates = templates;
        this.prepare();
        this.render();
        this.scheduleDeadline();
      } else if (this.fetchedAt >= this.nextDeadline) {
        this.timeMoved(); // the deadline's timer was late (a background tab): catch up now
      } else if (this.live) {
        this.renderSnapshot();
      }
      if (this.day !== fmt.today()) this.newDay();
    } catch (err) {
      if (seq !== this.seq) return;
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
    }
    if (seq === this.seq) this.timer = setTimeout(() => this.load(), REFRESH_MS);
  }

  /** Normalises the events and replays them all once for the per-event notes. */
  prepare() {
    const events = (this.data.events ?? []).map((e, i) => normaliseEvent(e, i)).filter((e) => e.t !== null).map((e, i) => ({ ...e, index: i }));
    this.events = events;
    const now = this.replayUntilNow();
    // Activities in start order; the server's list first, then any only the events know.
    const ids = [];
    for (const a of this.data.activities ?? []) ids.push(a.activity_id);
    for (const e of events) if (e.activityId && !ids.includes(e.activityId)) ids.push(e.activityId);
    this.activityIds = ids;
    this.startedIds = new Set(events.filter((e) => e.type === "activity.started" || (e.type === "push.sent" && e.push.kind === "start"))
      .map((e) => e.activityId));
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
   * Replays every event up to now for the per-event notes and the transitions that time alone
   * caused so far, and finds the next instant at which that list (or a note) changes: the next
   * stale date, 8-hour end or removal, or an event stamped in the future. Returns now.
   */
  replayUntilNow() {
    const now = fmt.nowSeconds();
    const full = replay(this.events, { until: now });
    this.notes = full.notes;
    this.derived = full.derived.filter((d) => d.t <= now);
    // Every time-driven transition comes at most 12 h after its activity's start, and no
    // activity starts after the last event: replaying that far ahead finds them all.
    const lastEvent = this.events.length ? this.events[this.events.length - 1].t : now;
    const ahead = replay(this.events, { until: Math.max(now, lastEvent) + MAX_LIFETIME + 1 });
    const upcoming = [...ahead.derived.map((d) => d.t), ...this.events.map((e) => e.t)].filter((t) => t > now);
    this.nextDeadline = upcoming.length ? Math.min(...upcoming) : Infinity;
    return now;
  }

  /** Re-renders the timeline when the next time-driven transition is due (no refetch needed:
   *  the events already say when it comes). */
  scheduleDeadline() {
    clearTimeout(this.deadlineTimer);
    if (!Number.isFinite(this.nextDeadline)) return;
    // A few ms late, so that the replay at wake-up is at or past the deadline.
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
    this.replayUntilNow();
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

  select(t, { count = Infinity, live = false } = {}) {
    this.live = live;
    this.at = live ? null : t;
    this.count = count;
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
    root.append(
      h("div", { class: "booking-head" },
        h("a", { class: "back", attrs: { href: "#/" } }, "← All activities"),
        h("h1", {}, "Booking ", h("span", { class: "mono", text: d.booking_id })),
        h("p", { class: "muted", text: `${this.activityIds.length} activit${this.activityIds.length === 1 ? "y" : "ies"} · ${this.events.length} event${this.events.length === 1 ? "" : "s"} · times in ${tz}` })));

    // Time chooser
    this.slider = h("input", {
      class: "time-slider",
      attrs: { type: "range", min: this.range.min, max: this.range.max, step: 1, "aria-label": "Point in time" },
      on: { input: () => this.select(Number(this.slider.value)) },
    });
    this.timeInput = h("input", {
      class: "time-input",
      attrs: { type: "datetime-local", step: 1, "aria-label": "Exact time" },
      on: {
        change: () => {
          const t = Date.parse(this.timeInput.value) / 1000;
          if (Number.isFinite(t)) this.select(t);
        },
      },
    });
    const ticks = h("div", { class: "ticks", attrs: { "aria-hidden": "true" } });
    this.ticks = [];
    for (const ev of this.events) {
      const note = this.notes[ev.index];
      const tick = h("span", { class: ["tick", `tick-${note?.effect ?? "info"}`] });
      this.ticks.push({ el: tick, t: ev.t });
      ticks.append(tick);
    }
    this.rangeEnd = h("span", { text: fmt.fullDate(this.range.max) });
    this.placeTicks();
    this.instantLabel = h("div", { class: "instant" });
    const step = (dir) => () => {
      const t = this.instant();
      const list = this.events.map((e, i) => ({ t: e.t, i }));
      const target = dir < 0
        ? [...list].reverse().find((x) => x.t < t || (x.t === t && x.i + 1 < Math.min(this.count, this.events.length)))
        : list.find((x) => x.t > t);
      if (target) this.select(target.t, { count: target.i + 1 });
    };
    const controls = h("div", { class: "time-controls" },
      h("button", { attrs: { type: "button", title: "Previous event" }, class: "ghost", on: { click: step(-1) }, text: "◀ Event" }),
      h("button", { attrs: { type: "button", title: "Next event" }, class: "ghost", on: { click: step(1) }, text: "Event ▶" }),
      this.timeInput,
      h("button", { attrs: { type: "button", title: "Follow the present" }, class: "ghost", on: { click: () => this.select(null, { live: true }) }, text: "Now" }));
    this.permalink = h("a", { class: "permalink", attrs: { href: "#" }, text: "Link to this moment" });
    this.cardsAt = h("div", { class: "snapshot-cards" });
    this.mismatch = h("p", { class: "mismatch", attrs: { hidden: true } });

    const snapshot = h("section", { class: "snapshot", attrs: { "aria-label": "Lock screen at the chosen time" } },
      h("h2", {}, "Lock screen at ", this.instantLabel),
      h("div", { class: "slider-wrap" }, ticks, this.slider),
      h("div", { class: "range-labels muted" }, h("span", { text: fmt.fullDate(this.range.min) }), this.permalink, this.rangeEnd),
      controls, this.cardsAt, this.mismatch);

    this.list = h("ol", { class: "events" });
    this.fillTimeline();
    const timeline = h("section", { class: "timeline", attrs: { "aria-label": "Events" } },
      h("h2", { text: `Timeline (${this.events.length} event${this.events.length === 1 ? "" : "s"})` }), this.list);

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
    // The ticks are coloured by the notes, which an event stamped in the future only gets now.
    for (const [i, ev] of this.events.entries()) {
      const tick = this.ticks?.[i]?.el;
      if (tick) tick.className = `tick tick-${this.notes[ev.index]?.effect ?? "info"}`;
    }
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
    const items = this.events.map((ev) => ({ t: ev.t, ev, note: this.notes[ev.index] }));
    for (const d of this.derived) items.push({ t: d.t, derived: d });
    // Stable: events keep server order; a derived transition goes after the events of its instant.
    return items.map((x, i) => ({ ...x, order: i })).sort((a, b) => a.t - b.t || (a.derived ? 1 : 0) - (b.derived ? 1 : 0) || a.order - b.order);
  }

  eventRow({ ev, note }) {
    const e = ev.raw;
    const multi = this.activityIds.length > 1;
    const kind = eventKind(e);
    const result = [];
    const details = [];
    if (ev.push) {
      const p = ev.push;
      const ok = p.status === 200;
      result.push(h("span", { class: ["pill", ok ? "ok" : "bad"], text: p.status === 0 ? "no answer" : `${p.status}${p.reason ? ` ${p.reason}` : ""}` }));
      result.push(h("span", { class: "pill tabular", text: fmt.latency(p.latencyMs) }));
      result.push(h("span", { class: ["pill", p.priority === 10 ? "p10" : null], text: `priority ${p.priority}` }));
      if (ev.fingerprint) details.push(h("span", { class: "detail" }, "to token ", h("span", { class: "mono", text: ev.fingerprint })));
    }
    if (e.type === "activity.token_updated" && ev.fingerprint) {
      details.push(h("span", { class: "detail" }, "token ", note?.fromFingerprint ? h("span", { class: "mono", text: note.fromFingerprint }) : null,
        note?.fromFingerprint ? " → " : "", h("span", { class: "mono", text: ev.fingerprint })));
    }
    if (e.type === "activity.started" && ev.fingerprint) {
      details.push(h("span", { class: "detail" }, "token ", h("span", { class: "mono", text: ev.fingerprint })));
    }
    if (note?.why && note.effect !== "applied") {
      let text = WHY[note.why] ?? note.why;
      if (note.why === "out_of_order") text += ` (its timestamp ${fmt.clock(ev.timestamp, { withSeconds: true })} ≤ ${fmt.clock(note.shownTimestamp, { withSeconds: true })})`;
      if (note.why === "superseded_token" && note.currentFingerprint) text += ` (current: ${note.currentFingerprint})`;
      details.push(h("span", { class: ["why", `why-${note.effect}`], text }));
    }
    if (note?.invalidated) details.push(h("span", { class: "why why-failed", text: `Token invalidated by APNs (${note.invalidated})` }));
    if (note?.diff?.length) {
      details.push(h("span", { class: "diff" }, note.diff.map((c) => h("span", { class: "change" },
        h("span", { class: "key", text: c.key }), " ",
        c.from === undefined ? null : h("span", { class: "from", text: fmt.jsonValue(c.from) }),
        c.from === undefined ? null : " → ",
        c.to === undefined ? h("span", { class: "to muted", text: "removed" }) : h("span", { class: "to", text: fmt.jsonValue(c.to) })))));
    } else if (ev.contentState && note?.effect !== "applied") {
      details.push(h("span", { class: "diff diff-ignored" }, Object.entries(ev.contentState).map(([k, v]) => h("span", { class: "change" }, h("span", { class: "key", text: k }), " ", h("span", { class: "to", text: fmt.jsonValue(v) })))));
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
      details.push(h("span", { class: "detail" }, "alert: ", h("span", { text: [e.alert.title, e.alert.body].filter((x) => typeof x === "string").join(" — ") })));
    }
    if (this.lateIndexes.has(ev.index)) {
      const received = fmt.toSeconds(e.received_at);
      details.push(h("span", { class: "detail late", title: `received ${fmt.fullDate(received)}`, text: `reported late: after later events (${fmt.duration(received - ev.t)} after it happened)` }));
    }
    if (ev.push && ev.timestamp !== ev.t && e.timestamp !== undefined) {
      details.push(h("span", { class: "detail", text: `aps timestamp ${fmt.clock(ev.timestamp, { withSeconds: true })}` }));
    }

    const count = ev.index + 1;
    return h("li", {
      class: ["ev", `ev-${kind.cls}`, `effect-${note?.effect ?? "info"}`],
      data: { index: ev.index, t: ev.t, type: e.type, activityId: ev.activityId ?? "" },
    }, h("button", {
      class: "ev-btn",
      attrs: { type: "button", title: "Show the lock screen right after this event" },
      on: { click: () => this.select(ev.t, { count }) },
    },
      h("span", { class: ["ev-icon", `ev-icon-${kind.cls}`] }, icon(kind.icon)),
      h("span", { class: "ev-main" },
        h("span", { class: "ev-line" },
          h("time", { class: "ev-time tabular", attrs: { datetime: new Date(ev.t * 1000).toISOString() }, text: fmt.clock(ev.t, { withSeconds: true }) }),
          h("span", { class: "ev-kind", text: kind.label }),
          multi && ev.activityId ? h("span", { class: "ev-activity mono", title: ev.activityId, text: ev.activityId }) : null,
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
            this.activityIds.length > 1 ? h("span", { class: "ev-activity mono", text: derived.activityId }) : null))));
  }

  renderSnapshot() {
    if (!this.cardsAt) return;
    const t = this.instant();
    if (this.live) this.extendRange(t);
    const { records } = replay(this.events, { until: t, count: this.count });
    this.instantLabel.textContent = this.live ? `now (${fmt.clock(t, { withSeconds: true })})` : fmt.fullDate(t);
    this.instantLabel.dataset.t = String(t);
    this.slider.value = String(Math.min(this.range.max, Math.max(this.range.min, Math.round(t))));
    this.timeInput.value = localInputValue(t);
    // To the millisecond: event times have them, and a link cut to the second opens before the event.
    this.permalink.setAttribute("href", bookingHref(this.id, t));
    const cards = [];
    const liveClock = this.live ? null : t;
    const budget = p10Budget(this.data);
    for (const id of this.activityIds) {
      const r = records.get(id);
      const server = (this.data.activities ?? []).find((a) => a.activity_id === id);
      if (!r && server && !this.startedIds.has(id)) {
        // The server knows it but its start is no longer among the stored events (pruned).
        const template = this.templates.get(server.attributes_type);
        cards.push(h("div", { class: ["snap", `snap-${server.state}`], data: { activityId: id, state: server.state } },
          h("div", { class: "snap-title" }, h("strong", { text: displayName(server, template) }), " ", h("span", { class: "mono muted", text: id })),
          h("p", { class: "mismatch", text: "Its start is no longer among the stored events (pruned?): this is the server's current card, not a replay." }),
          badges(server, { budget }), lockScreen(server, template), diagnostics(server, { bookingLink: false, budget })));
        continue;
      }
      if (!r) {
        cards.push(h("div", { class: "snap", data: { activityId: id, state: "none" } },
          h("div", { class: "snap-title" }, h("span", { class: "mono", text: id })),
          h("div", { class: "ls-card ls-none", text: "Not started yet at this time" })));
        continue;
      }
      const a = toActivity(r, t);
      const template = this.templates.get(a.attributes_type);
      if (!template) continue;
      cards.push(h("div", { class: ["snap", `snap-${a.state}`], data: { activityId: id, state: a.state } },
        h("div", { class: "snap-title" }, h("strong", { text: displayName(a, template) }), " ", h("span", { class: "mono muted", text: id })),
        badges(a, { at: liveClock ?? t, budget }),
        a.state === "dismissed" ? h("div", { class: "gone", text: "No longer on the lock screen — this is what it showed last" }) : null,
        lockScreen(a, template, { at: liveClock }),
        islands(a, template, { at: liveClock }),
        diagnostics(a, { at: liveClock ?? t, bookingLink: false, budget })));
    }
    clear(this.cardsAt).append(...cards);
    this.checkAgainstServer();
  }

  /** Following now, the replay must agree with the server's own state: say so when it does not. */
  checkAgainstServer() {
    if (!this.live) {
      this.mismatch.hidden = true;
      return;
    }
    // The server's states are as of the fetch; the card may be drawn later (at a deadline), when
    // a state has flipped that the server will only report on the next refresh: compare the
    // replay at the fetch.
    const at = this.fetchedAt ?? fmt.nowSeconds();
    const { records } = replay(this.events, { until: at });
    const problems = [];
    for (const server of this.data.activities ?? []) {
      const r = records.get(server.activity_id);
      if (!r) continue;
      const mine = toActivity(r, at);
      // Skip states that flip within the clocks' slack of that instant: stale date, 8-hour end,
      // removal.
      const deadlines = [mine.stale_date, mine.started_at + MAX_ACTIVE, mine.visible_until,
        fmt.toSeconds(server.stale_date), fmt.toSeconds(server.visible_until)];
      const flipping = deadlines.some((d) => d !== null && Math.abs(at - d) <= CLOCK_SLACK);
      if (mine.state !== server.state && !flipping) {
        problems.push(`${server.activity_id}: replay says ${mine.state}, server says ${server.state}`);
      }
      if (JSON.stringify(mine.content_state) !== JSON.stringify(server.content_state)) {
        problems.push(`${server.activity_id}: replayed content differs from the server's`);
      }
    }
    this.mismatch.hidden = problems.length === 0;
    this.mismatch.textContent = problems.length ? `Replay and server disagree — ${problems.join("; ")}` : "";
  }

  markTimeline() {
    if (!this.rows) return;
    const t = this.instant();
    let current = null;
    for (const { row, item } of this.rows) {
      const idx = item.ev ? item.ev.index : null;
      const past = item.t < t || (item.t === t && (idx === null ? this.count === Infinity : idx < this.count));
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
    case "push.sent": return { label: `Push ${e.event ?? ""}`.trim(), cls: "push", icon: "antenna.radiowaves.left.and.right" };
    default: return { label: String(e.type), cls: "other", icon: "info.circle" };
  }
}

function localInputValue(t) {
  const d = new Date(t * 1000);
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** The booking of activity `id` (`GET /api/activities/{id}`), or null when there is none. */
async function bookingOfActivity(id) {
  try {
    const activity = await getJSON(`api/activities/${encodeURIComponent(id)}`);
    return typeof activity?.booking_id === "string" && activity.booking_id ? activity.booking_id : null;
  } catch (err) {
    if (!(err instanceof NotFound)) console.warn(`activity ${id}: ${err.message}`);
    return null;
  }
}

function notFound(id) {
  return h("div", { class: "not-found", attrs: { role: "alert" } },
    h("h1", { text: "Booking not found" }),
    h("p", {}, "No booking or activity with the id ", h("span", { class: "mono", text: id }), " is known to this monitor."),
    h("p", { class: "muted", text: "Check the id (it is case-sensitive), or whether its events were ever ingested or already pruned." }),
    h("a", { class: "back", attrs: { href: "#/" }, text: "← All activities" }));
}
