// Broadcast channels (#/channels, #/channels/<id>): the channels the server knows (created by the
// backend's channel management, or only seen in subscriptions and broadcasts), each with its
// storage policy, subscribers and last broadcast with APNs' answer; one channel shows the lock
// screen its subscribers show (its first subscriber's card), its subscribers and its latest
// broadcasts. Everything is the server's (GET /api/channels, GET /api/channels/{id}): what a
// broadcast did is its effect, as the server judged it.

import { h, clear } from "./dom.js";
import { getJSON, NotFound, staleText } from "./api.js";
import { loadTemplate } from "./templates.js";
import { wallCard, bookingHref, channelHref } from "./card.js";
import * as fmt from "./format.js";

const REFRESH_MS = 5000;
const PAGE = 100; // channels asked for at a time (the server's default page)

const STATE = { live: "live", deleted: "deleted", unreported: "not reported" };
const STATE_TITLE = {
  live: "Created (APNs answered 201) and not deleted since",
  deleted: "Deleted (APNs answered 204): broadcasts to it have no effect",
  unreported: "Known only from subscriptions or broadcasts: the backend did not report creating it",
};

/** `message-storage-policy` in words. */
function storage(policy) {
  if (policy === 0) return "0 · no storage";
  if (policy === 1) return "1 · most recent, 8 h";
  return "—";
}

/** APNs' answer as a pill: "200", "400 BadChannelId", "no answer". */
function answerPill(status, reason) {
  const ok = status >= 200 && status < 300;
  return h("span", { class: ["pill", ok ? "ok" : "bad"], text: status === 0 ? "no answer" : `${status}${reason ? ` ${reason}` : ""}` });
}

const sentence = (text) => (text ? text.charAt(0).toUpperCase() + text.slice(1) : "");

export class ChannelsView {
  constructor({ root }) {
    this.root = root;
    this.timer = null;
    this.seq = 0;
    this.id = null;
    this.sig = null;
    this.wanted = PAGE;
    this.lastOk = null; // when the server last answered (Unix seconds)
  }

  /** Shows the list (`id` null) or one channel. */
  show(id) {
    if (id !== this.id || this.sig === null) {
      this.sig = null;
      this.wanted = PAGE;
      clear(this.root).append(h("div", { class: "loading", text: id === null ? "Loading channels…" : `Loading channel ${id}…` }));
    }
    this.id = id;
    this.load();
  }

  /** Leaves the view: stops refreshing and empties it (its cards must not linger in the page). */
  hide() {
    clearTimeout(this.timer);
    this.seq++;
    this.id = null;
    this.sig = null;
    clear(this.root);
  }

  async load() {
    clearTimeout(this.timer);
    const seq = ++this.seq;
    const id = this.id;
    try {
      if (id === null) {
        const data = await this.fetchList();
        if (seq !== this.seq) return;
        const sig = JSON.stringify([fmt.today(), data]); // after midnight, yesterday's times need their day
        if (sig !== this.sig) {
          this.sig = sig;
          this.renderList(data);
        }
      } else {
        const data = await getJSON(`api/channels/${encodeURIComponent(id)}`);
        const first = data.activities?.[0];
        const template = first ? await loadTemplate(first.attributes_type) : null;
        if (seq !== this.seq) return;
        const sig = JSON.stringify([fmt.today(), template?.revision, data]); // a template loaded at last redraws
        if (sig !== this.sig) {
          this.sig = sig;
          this.renderChannel(data, template);
        }
      }
      this.lastOk = fmt.nowSeconds();
      this.setStatus(null);
    } catch (err) {
      if (seq !== this.seq) return;
      if (err instanceof NotFound && id !== null) {
        this.sig = "not-found";
        clear(this.root).append(h("div", { class: "not-found", attrs: { role: "alert" } },
          h("h1", { text: "Channel not found" }),
          h("p", {}, "No channel with the id ", h("span", { class: "mono", attrs: { dir: "auto" }, text: id }), " is known to this monitor: none was reported created, and no activity or broadcast named it."),
          h("a", { class: "back", attrs: { href: "#/channels" }, text: "← Channels" })));
        return;
      }
      console.error(err);
      if (this.sig === null) clear(this.root).append(h("div", { class: "empty", text: `Cannot load ${id === null ? "the channels" : `channel ${id}`}: ${err.message}` }));
      else this.setStatus(err); // the last data stays, marked stale
    }
    if (seq === this.seq) this.timer = setTimeout(() => this.load(), REFRESH_MS);
  }

  /** The refresh's state: when the data shown was fetched, or why it may be out of date. */
  setStatus(err) {
    if (!this.status) return;
    this.status.classList.toggle("status-error", Boolean(err));
    this.status.textContent = err ? staleText(err, this.lastOk) : `Updated ${fmt.clock(this.lastOk, { withSeconds: true })}`;
  }

  /** A new status line for a view's head (each render builds its head anew). */
  statusLine() {
    this.status = h("p", { class: "status view-status", attrs: { role: "status" } });
    return this.status;
  }

  /** The first `this.wanted` channels, page after page as the server gives them. */
  async fetchList() {
    const base = `api/channels?limit=${PAGE}`;
    const data = await getJSON(base);
    let channels = data.channels ?? [];
    while (data.next_cursor && channels.length < this.wanted) {
      const more = await getJSON(`${base}&cursor=${encodeURIComponent(data.next_cursor)}`);
      channels = channels.concat(more.channels ?? []);
      data.next_cursor = more.next_cursor;
    }
    data.channels = channels;
    return data;
  }

  renderList(data) {
    const counts = data.counts ?? {};
    const channels = data.channels ?? [];
    const limit = Number.isInteger(data.limit) ? ` · at most ${data.limit.toLocaleString("en")} per app and environment` : "";
    const head = h("div", { class: "channels-head" },
      h("a", { class: "back", attrs: { href: "#/" }, text: "← All activities" }),
      h("h1", { text: "Broadcast channels" }),
      h("p", { class: "channels-sub", text: `${counts.live ?? 0} live · ${counts.deleted ?? 0} deleted${limit}` }), this.statusLine());
    if (!channels.length) {
      clear(this.root).append(head, h("p", { class: "empty", text: "No channel yet: channels appear once the backend reports creating one (channel.created), an activity subscribes to one, or a broadcast names one." }));
      return;
    }
    const rows = channels.map((c) => {
      const b = c.last_broadcast;
      return h("tr", { class: ["channel-row", `channel-${c.state}`], data: { channelId: c.channel_id } },
        h("td", { class: "channel-id-cell" }, h("a", { class: "mono", attrs: { href: channelHref(c.channel_id), dir: "auto" }, title: c.channel_id, text: c.channel_id })),
        h("td", { class: "channel-state", title: STATE_TITLE[c.state] ?? null, text: STATE[c.state] ?? c.state }),
        h("td", { class: "channel-storage", text: storage(c.storage_policy) }),
        h("td", { class: "channel-subscribers tabular", text: String(c.subscribers ?? 0) }),
        h("td", { class: "channel-last" }, b
          ? [h("span", { class: "tabular", title: fmt.fullDate(fmt.toSeconds(b.at)), text: fmt.clock(fmt.toSeconds(b.at), { withSeconds: true }) }),
            ` ${b.event} · priority ${b.priority}`]
          : h("span", { class: "muted", text: "none" })),
        h("td", { class: "channel-answer" }, b
          ? [answerPill(b.status, b.reason), " ", h("span", { class: "tabular muted", text: fmt.latency(b.latency_ms) }), " ",
            h("span", { class: b.result === "applied" ? "ok" : "bad", text: b.result === "applied" ? "applied" : `no effect${b.why ? `: ${b.why}` : ""}` })]
          : null));
    });
    const table = h("table", { class: "channels-table" },
      h("thead", {}, h("tr", {}, ...["Channel", "State", "Storage", "Subscribers", "Last broadcast", "Its answer"].map((t) => h("th", { attrs: { scope: "col" }, text: t })))),
      h("tbody", {}, rows));
    const more = data.next_cursor
      ? h("button", { class: ["ghost", "load-more"], attrs: { type: "button" }, on: { click: () => { this.wanted = channels.length + PAGE; this.load(); } }, text: `Load ${PAGE} more channels` })
      : null;
    clear(this.root).append(head, h("div", { class: "channels-scroll" }, table), ...(more ? [more] : []));
  }

  renderChannel(c, template) {
    const budget = Number.isInteger(c.priority10_budget) ? c.priority10_budget : null;
    const subscribers = c.activities ?? [];
    const facts = [
      h("span", { class: "channel-state", title: STATE_TITLE[c.state] ?? null, text: STATE[c.state] ?? c.state }),
      `storage ${storage(c.storage_policy)}`,
      c.created_at ? `created ${fmt.clock(fmt.toSeconds(c.created_at), { withSeconds: true })}` : null,
      c.deleted_at ? `deleted ${fmt.clock(fmt.toSeconds(c.deleted_at), { withSeconds: true })}` : null,
      `${c.subscribers ?? 0} subscriber${c.subscribers === 1 ? "" : "s"}`,
    ].filter(Boolean);
    const head = h("div", { class: "channels-head" },
      h("a", { class: "back", attrs: { href: "#/channels" }, text: "← Channels" }),
      h("h1", {}, "Channel ", h("span", { class: "mono channel-title", attrs: { dir: "auto" }, text: c.channel_id })),
      h("p", { class: "channels-sub" }, facts.flatMap((f, i) => (i ? [" · ", f] : [f]))), this.statusLine());

    // What its subscribers' lock screens show: each took the same broadcasts; the first (phone
    // order) stands for them.
    const first = subscribers[0];
    const lock = h("section", { class: "channel-lock", attrs: { "aria-label": "The lock screen its subscribers show" } },
      h("h2", { text: first ? "The lock screen its subscribers show" : "No live subscriber" }),
      first && template
        ? [h("p", { class: "muted channel-note", text: subscribers.length > 1 ? `The first of ${c.subscribers} subscribers, in the phone's order:` : "Its one subscriber:" }),
          wallCard(first, template, { budget })]
        : h("p", { class: "muted", text: "No pending, active or stale activity receives this channel now." }));

    const subs = h("section", { class: "channel-subs" },
      h("h2", { text: `Subscribers (${c.subscribers ?? 0}${subscribers.length < (c.subscribers ?? 0) ? `, first ${subscribers.length}` : ""})` }),
      subscribers.length
        ? h("ul", { class: "channel-list" }, subscribers.map((a) => h("li", { class: "channel-sub", data: { activityId: a.activity_id } },
          a.booking_id ? h("a", { class: "mono", attrs: { href: bookingHref(a.booking_id), dir: "auto" }, text: a.booking_id }) : h("span", { class: "muted", text: "—" }),
          h("span", { class: "mono muted", attrs: { dir: "auto" }, title: a.activity_id, text: a.activity_id }),
          h("span", { class: ["sub-state", `state-${a.state}`], text: a.state }),
          h("span", { class: "muted tabular", text: `content ${fmt.clock(fmt.toSeconds(a.content_timestamp), { withSeconds: true })}` }))))
        : h("p", { class: "muted", text: "None now." }));

    // The server lists the newest events in time order; newest first here.
    const events = [...(c.events ?? [])].reverse();
    const evs = h("section", { class: "channel-events" },
      h("h2", { text: `Latest broadcasts and channel requests (${events.length})` }),
      events.length
        ? h("ol", { class: "channel-list" }, events.map((e) => {
          const effect = e.effect ?? null;
          const applied = effect?.result === "applied";
          const kind = e.type === "push.sent" ? `Broadcast ${e.event ?? ""}`.trim()
            : e.type === "channel.created" ? "Channel created" : e.type === "channel.deleted" ? "Channel deleted" : e.type;
          return h("li", { class: ["channel-event", `effect-${applied ? "applied" : effect?.why === "failed" ? "failed" : "ignored"}`], data: { type: e.type } },
            h("time", { class: "tabular muted", attrs: { datetime: e.occurred_at }, text: fmt.clock(fmt.toSeconds(e.occurred_at), { withSeconds: true }) }),
            h("span", { class: "ev-kind", text: kind }),
            typeof e.status === "number" ? answerPill(e.status, e.reason) : null,
            e.priority !== undefined && e.priority !== null ? h("span", { class: ["pill", e.priority === 10 ? "p10" : null], text: `priority ${e.priority}` }) : null,
            typeof e.latency_ms === "number" ? h("span", { class: "pill tabular", text: fmt.latency(e.latency_ms) }) : null,
            effect?.text ? h("span", { class: ["why", applied ? "why-info" : effect.why === "failed" ? "why-failed" : "why-ignored"], text: sentence(effect.text) }) : null);
        }))
        : h("p", { class: "muted", text: "None stored." }));

    clear(this.root).append(head, h("div", { class: "channel-grid" }, lock, h("div", { class: "channel-side" }, subs, evs)));
  }
}
