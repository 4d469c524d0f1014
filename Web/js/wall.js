// The activity wall: every visible activity in phone order, refreshed every few seconds in
// place (cards are keyed by activity id and only rebuilt when their data changed, so scroll
// position, filters and ticking timers survive). Only the cards drawn are asked of the server
// (`limit`, then `next_cursor`): "Show more" asks for the next page, so a fleet of any size
// costs what is on screen, and every activity can be reached. Scheduled activities (`pending`
// until their start date) are not on any lock screen yet: they are listed apart, above, in their
// own section.

import { h, clear, append } from "./dom.js";
import { getJSON, staleText } from "./api.js";
import { loadTemplate, cachedTemplate, onTemplateChange } from "./templates.js";
import { wallCard, scheduledCard, bookingHref } from "./card.js";
import * as fmt from "./format.js";

const REFRESH_MS = 4000;
const PAGE = 60; // cards added to the page at a time
const MAX_LIMIT = 1000; // the most the server lists in one answer (DESIGN.md section 6)

export class Wall {
  constructor({ root, onFilters }) {
    this.root = root;
    this.onFilters = onFilters;
    this.filters = { state: "", type: "", q: "" };
    this.cards = new Map(); // activity id → { el, sig }
    this.scheduledCards = new Map(); // the same, for the scheduled section
    this.list = [];
    this.cursor = null; // the server's next_cursor after the last activity fetched: there are more
    this.shown = PAGE;
    this.types = new Set();
    this.counts = null;
    this.budget = null; // the server's priority-10 budget (`priority10_budget`), from each refresh
    this.seq = 0;
    this.timer = null;
    this.running = false;
    this.lastOk = null;
    this.build();
    // A template that failed and loaded on a later try: its cards are drawn again with it now.
    onTemplateChange(() => {
      if (this.running && this.lastOk !== null) this.render();
    });
  }

  build() {
    this.scheduledCount = h("span", { class: "section-count" });
    this.scheduledGrid = h("div", { class: "wall scheduled-grid" });
    this.scheduled = h("section", { class: "scheduled", attrs: { id: "scheduled", hidden: true, "aria-label": "Scheduled activities" } },
      h("h2", { class: "section-title" }, "Scheduled ", this.scheduledCount,
        h("span", { class: "section-note", text: "pending until their start date: not on any lock screen yet" })),
      this.scheduledGrid);
    this.scheduledMore = h("button", { class: ["ghost", "scheduled-more"], attrs: { type: "button", hidden: true }, on: { click: () => this.setFilters({ state: "pending" }) } });
    this.scheduled.append(this.scheduledMore);
    this.nowTitle = h("h2", { class: "section-title", attrs: { id: "now-title", hidden: true }, text: "On lock screens now" });
    this.grid = h("div", { class: "wall", attrs: { id: "wall", "aria-live": "off" } });
    this.empty = h("div", { class: "empty", attrs: { hidden: true } });
    this.more = h("button", { class: "show-more", attrs: { type: "button", hidden: true }, on: { click: () => this.showMore() } });
    this.sentinel = h("div", { class: "sentinel", attrs: { "aria-hidden": "true" } });
    this.attention = this.root.querySelector("#attention") ?? h("p", { class: "attention" });
    this.root.append(this.scheduled, this.nowTitle, this.grid, this.empty, this.more, this.sentinel);
    new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && this.running && (this.shown < this.paged().length || this.cursor)) this.showMore();
    }, { rootMargin: "800px 0px" }).observe(this.sentinel);
  }

  /** The toolbar's controls (in the page header), wired to this wall. */
  bindControls({ stateButtons, typeSelect, searchForm, searchInput, status }) {
    this.stateButtons = stateButtons;
    this.typeSelect = typeSelect;
    this.searchInput = searchInput;
    this.status = status;
    for (const b of stateButtons) b.addEventListener("click", () => this.setFilters({ state: b.dataset.state }));
    typeSelect.addEventListener("change", () => this.setFilters({ type: typeSelect.value }));
    let debounce = null;
    const search = () => {
      debounce = null;
      // On the booking page the box only opens bookings: it must not rewrite the URL.
      if (this.running) this.setFilters({ q: searchInput.value.trim() });
    };
    searchInput.addEventListener("input", () => {
      clearTimeout(debounce);
      debounce = setTimeout(search, 200);
    });
    searchForm.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const q = searchInput.value.trim();
      if (!q) return;
      // Enter acts on what is typed now: a search still waiting for its pause runs at once, and
      // the booking is looked up for `q` itself, not in the list of an earlier search.
      if (debounce !== null) {
        clearTimeout(debounce);
        search();
      }
      location.hash = bookingHref(await this.bookingFor(q));
    });
    this.syncControls();
  }

  /**
   * The booking Enter opens for `q`, from the server's search (`?q=`: a prefix of an activity or
   * booking id, in any case; ids themselves are case-sensitive): the booking whose id is `q`
   * exactly, the booking of the activity `q`, the one booking whose id is `q` in another case,
   * or the only booking the search matches. Anything else is `q` as is: the booking page also
   * looks it up as an activity id (one not listed, e.g. dismissed).
   */
  async bookingFor(q) {
    let answer;
    try {
      answer = await getJSON(`api/activities?${new URLSearchParams({ q, limit: "100" })}`);
    } catch (err) {
      console.warn(`search ${q}: ${err.message}`);
      return q;
    }
    const list = answer.activities ?? [];
    const bookings = [...new Set(list.map((a) => a.booking_id).filter(Boolean))];
    if (bookings.includes(q)) return q;
    const ofActivity = list.find((a) => a.activity_id === q && a.booking_id)?.booking_id;
    if (ofActivity) return ofActivity;
    const folded = bookings.filter((b) => b.toLowerCase() === q.toLowerCase());
    if (folded.length === 1) return folded[0];
    // One booking only if the answer is the whole match (no next page).
    if (bookings.length === 1 && !answer.next_cursor && !folded.length) return bookings[0];
    return q;
  }

  setFilters(change, { fromUrl = false } = {}) {
    const next = { ...this.filters, ...change };
    const changed = next.state !== this.filters.state || next.type !== this.filters.type || next.q !== this.filters.q;
    this.filters = next;
    this.syncControls();
    if (!changed) return;
    if (!fromUrl) this.onFilters?.(this.filters);
    this.shown = PAGE;
    window.scrollTo({ top: 0 });
    if (this.running) this.refresh();
  }

  syncControls() {
    if (!this.stateButtons) return;
    for (const b of this.stateButtons) {
      const on = b.dataset.state === this.filters.state;
      b.classList.toggle("on", on);
      b.setAttribute("aria-pressed", String(on));
    }
    if (this.filters.type && !this.types.has(this.filters.type)) this.types.add(this.filters.type);
    this.fillTypes();
    if (document.activeElement !== this.searchInput) this.searchInput.value = this.filters.q;
  }

  fillTypes() {
    const want = ["", ...[...this.types].sort()];
    const have = [...this.typeSelect.options].map((o) => o.value);
    if (want.join("\n") !== have.join("\n")) {
      clear(this.typeSelect);
      for (const t of want) this.typeSelect.append(h("option", { attrs: { value: t }, text: t || "All types" }));
    }
    this.typeSelect.value = this.filters.type;
  }

  start() {
    if (this.running) return;
    this.running = true;
    this.refresh();
  }

  stop() {
    this.running = false;
    clearTimeout(this.timer);
  }

  query(extra = {}) {
    const p = new URLSearchParams();
    if (this.filters.state) p.set("state", this.filters.state);
    if (this.filters.type) p.set("attributes_type", this.filters.type);
    if (this.filters.q) p.set("q", this.filters.q);
    for (const [k, v] of Object.entries(extra)) p.set(k, v);
    return p;
  }

  /**
   * The listing's activities, page by page, each request asking for what is still
   * `wanted(list)`, until nothing is or the last page came. Returns { list, counts, budget,
   * cursor } (`counts` and the budget from the first answer).
   */
  async fetchList(seq, extra, wanted) {
    let list = [];
    let first = null;
    let cursor = null;
    do {
      const q = this.query({ ...extra, limit: Math.min(MAX_LIMIT, Math.max(1, wanted(list))) });
      if (cursor) q.set("cursor", cursor);
      const body = await getJSON(`api/activities?${q}`);
      if (seq !== this.seq) return null;
      first ??= body;
      list = list.concat(body.activities ?? []);
      cursor = body.next_cursor ?? null;
    } while (cursor && wanted(list) > 0);
    const budget = Number.isInteger(first.priority10_budget) ? first.priority10_budget : null;
    return { list, counts: first.counts, budget, cursor };
  }

  async refresh() {
    clearTimeout(this.timer);
    const seq = ++this.seq;
    try {
      const drawable = (list) => list.filter((a) => a.state !== "pending").length;
      // Scheduled ones are shown soonest first, an order the server does not list them in: all
      // of them are fetched (there are few: they wait for a start date).
      const all = () => MAX_LIMIT;
      const pendingOnly = this.filters.state === "pending";
      const main = await this.fetchList(seq, {}, pendingOnly ? all : (list) => this.shown - drawable(list));
      if (!main) return;
      let { list, counts } = main;
      const { budget, cursor } = main;
      if (!pendingOnly && !this.filters.state && counts?.pending > 0) {
        const scheduled = await this.fetchList(seq, { state: "pending" }, all);
        if (!scheduled) return;
        list = list.filter((a) => a.state !== "pending").concat(scheduled.list);
      }
      if (this.filters.state === "dismissed") {
        // The dismissed listing carries no counts of the visible states: ask for them.
        const body = await getJSON(`api/activities?${this.query({ limit: 1, state: "" })}`);
        if (seq !== this.seq) return;
        counts = body.counts;
      }
      const triage = await getJSON("api/triage?limit=1");
      await Promise.all([...new Set(list.map((a) => a.attributes_type))].map(loadTemplate));
      if (seq !== this.seq || !this.running) return;
      this.triage = triage;
      if (!this.filters.type) for (const a of list) this.types.add(a.attributes_type);
      this.list = list;
      this.cursor = cursor;
      this.counts = counts;
      this.budget = budget ?? this.budget;
      this.lastOk = Date.now();
      this.render();
      this.setStatus(null);
    } catch (err) {
      if (seq !== this.seq) return;
      console.error(err);
      this.setStatus(err);
    } finally {
      if (seq === this.seq && this.running) this.timer = setTimeout(() => this.refresh(), REFRESH_MS);
    }
  }

  setStatus(err) {
    this.fillTypes();
    const c = this.counts ?? { active: 0, stale: 0, ended: 0, pending: 0 };
    for (const b of this.stateButtons) {
      const n = b.querySelector(".count");
      if (!n) continue;
      const s = b.dataset.state;
      n.textContent = s === "" ? String(c.active + c.stale + c.ended) : String(c[s] ?? "");
    }
    this.status.classList.toggle("status-error", Boolean(err));
    this.status.textContent = err
      ? staleText(err, this.lastOk && this.lastOk / 1000)
      : `Updated ${fmt.clock(this.lastOk / 1000, { withSeconds: true })}`;
    this.status.title = err ? "The last refresh failed; the cards show the last good data." : `Live: refreshes every ${REFRESH_MS / 1000} s`;
  }

  /** The next page of cards: drawn from what was fetched, or asked of the server. */
  showMore() {
    this.shown += PAGE;
    if (this.shown > this.paged().length && this.cursor && this.running) this.refresh();
    else this.render();
  }

  /** How many activities the current filters list, from the server's counts (filtered by type
   *  and search, not by state); null when it does not say (the dismissed listing). */
  total() {
    const c = this.counts;
    if (!c) return null;
    const s = this.filters.state;
    if (s === "") return (c.active ?? 0) + (c.stale ?? 0) + (c.ended ?? 0);
    return s in c ? c[s] : null;
  }

  /** One line for on-call, from the server's triage (GET /api/triage): what needs a look now,
   *  linking to the triage view. */
  renderAttention(triage) {
    const perHour = this.budget === null ? "" : ` (${this.budget}/h)`;
    const items = (triage?.problems ?? []).filter((p) => p.count > 0)
      .map((p) => [p.count, p.problem === "priority10_heavy" ? `${p.title}${perHour}` : p.title]);
    clear(this.attention);
    this.attention.hidden = items.length === 0;
    if (!items.length) return;
    this.attention.append(h("a", { class: "attention-label", attrs: { href: "#/triage" }, text: "Needs a look" }),
      ...items.map(([n, title]) => h("span", { class: "attention-item" }, h("strong", { text: String(n) }), ` ${title}`)));
  }

  /** What the listing holds that lock screens show (or showed: the dismissed listing), in the
   *  server's (phone) order: everything but the scheduled activities. */
  onLockScreens() {
    return this.list.filter((a) => a.state !== "pending");
  }

  /** The scheduled activities the listing holds (the server's `pending`), soonest start first. */
  scheduledList() {
    const at = (a) => fmt.toSeconds(a.start_date) ?? Infinity;
    return this.list.filter((a) => a.state === "pending").map((a, i) => [a, i])
      .sort(([a, i], [b, j]) => at(a) - at(b) || i - j).map(([a]) => a);
  }

  /** What "Show more" pages through: the lock-screen cards, or the scheduled ones when only
   *  they are listed (the Scheduled filter). */
  paged() {
    return this.filters.state === "pending" ? this.scheduledList() : this.onLockScreens();
  }

  /** Synchronous on purpose: every template was loaded by `refresh`, so renders never interleave. */
  render() {
    const pendingOnly = this.filters.state === "pending";
    const list = this.onLockScreens();
    const allScheduled = this.scheduledList();
    const paged = pendingOnly ? allScheduled : list;
    const n = Math.min(this.shown, paged.length);
    // Beside the lock-screen cards, the first page of scheduled ones; the Scheduled filter lists
    // them all, a page at a time.
    const scheduled = allScheduled.slice(0, pendingOnly ? n : PAGE);
    const day = fmt.today(); // in the signature: after midnight yesterday's "14:32" needs its day
    this.place(this.grid, this.cards, pendingOnly ? [] : list.slice(0, n), wallCard, day);
    this.place(this.scheduledGrid, this.scheduledCards, scheduled, scheduledCard, day);
    this.scheduled.hidden = allScheduled.length === 0;
    this.scheduled.classList.toggle("scheduled-only", pendingOnly); // then it is the page: no scroll box of its own
    this.scheduledCount.textContent = String(allScheduled.length);
    const hiddenScheduled = pendingOnly ? 0 : allScheduled.length - scheduled.length;
    this.scheduledMore.hidden = hiddenScheduled <= 0;
    this.scheduledMore.textContent = `All scheduled (${hiddenScheduled} more)`;
    this.nowTitle.hidden = allScheduled.length === 0 || list.length === 0;
    this.renderAttention(this.triage);
    const total = this.total();
    const remaining = total === null ? paged.length - n : total - n;
    this.more.hidden = n >= paged.length && !this.cursor;
    this.more.textContent = remaining > 0 ? `Show more (${remaining} more)` : "Show more";
    this.empty.hidden = list.length > 0 || allScheduled.length > 0;
    if (!list.length) {
      const f = this.filters;
      // The search matches the start of an activity or booking id (or the whole id), any case.
      append(clear(this.empty), [f.q
        ? ["No activity or booking id starts with “", h("bdi", { text: f.q }), `”${f.type || f.state ? " among these filters" : ""} (search matches the start of an id, any case).`]
        : f.type || f.state
          ? "No activity matches these filters."
          : "No visible Live Activity. Activities appear here as soon as their events are ingested (POST /v1/events)."]);
    }
  }

  /** Puts one card per activity of `items` into `container`, in order, keeping the cards whose
   *  data did not change (`cards`: activity id → { el, sig }) and removing the others. */
  place(container, cards, items, build, day) {
    const keep = new Set();
    let pos = 0;
    for (const a of items) {
      keep.add(a.activity_id);
      const template = cachedTemplate(a.attributes_type);
      if (!template) continue; // not loaded yet: the next refresh draws it
      // A server restarted with another budget redraws, and so does a template loaded at last.
      const sig = JSON.stringify([this.budget, day, template.revision, a]);
      let entry = cards.get(a.activity_id);
      if (!entry || entry.sig !== sig) {
        const el = build(a, template, { budget: this.budget });
        if (entry) entry.el.replaceWith(el);
        entry = { el, sig };
        cards.set(a.activity_id, entry);
      }
      const at = container.children[pos];
      if (at !== entry.el) container.insertBefore(entry.el, at ?? null);
      pos++;
    }
    for (const [id, entry] of cards) {
      if (!keep.has(id)) {
        entry.el.remove();
        cards.delete(id);
      }
    }
  }
}
