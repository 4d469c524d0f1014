// On-call triage (#/triage): what needs a look now, grouped by problem with counts, each
// activity linking to its booking. The server decides what is a problem (GET /api/triage, one
// rule set beside the state engine); this page only lists what it found.

import { h, clear } from "./dom.js";
import { getJSON, staleText } from "./api.js";
import { bookingHref } from "./card.js";
import * as fmt from "./format.js";

const REFRESH_MS = 5000;
// The wall's filter that lists a problem's activities (`#/?state=…`), where one exists: "and 252
// more" links there. The wall filters by state, type and search only.
const WALL_FILTER = { stale: "#/?state=stale" };

export class TriageView {
  constructor({ root }) {
    this.root = root;
    this.timer = null;
    this.seq = 0;
    this.sig = null;
    this.lastOk = null; // when the server last answered (Unix seconds)
  }

  show() {
    this.sig = null;
    clear(this.root).append(h("div", { class: "loading", text: "Loading what needs a look…" }));
    this.load();
  }

  hide() {
    clearTimeout(this.timer);
    this.seq++;
  }

  async load() {
    clearTimeout(this.timer);
    const seq = ++this.seq;
    try {
      const data = await getJSON("api/triage");
      if (seq !== this.seq) return;
      this.lastOk = fmt.nowSeconds();
      const sig = JSON.stringify([fmt.today(), data.problems]); // after midnight, times need their day
      if (sig !== this.sig) {
        this.sig = sig;
        this.render(data);
      }
      // The lists may be the same; the time they are true at is not.
      this.sub.textContent = this.subText(data);
      this.setStatus(null);
    } catch (err) {
      if (seq !== this.seq) return;
      console.error(err);
      if (this.sig === null) clear(this.root).append(h("div", { class: "empty", text: `Cannot load the triage view: ${err.message}` }));
      else this.setStatus(err); // the last lists stay, marked stale
    }
    if (seq === this.seq) this.timer = setTimeout(() => this.load(), REFRESH_MS);
  }

  subText(data) {
    const total = (data.problems ?? []).reduce((n, p) => n + (p.count > 0 ? p.count : 0), 0);
    return total ? `${total} problem${total === 1 ? "" : "s"} now, as of ${fmt.clock(fmt.toSeconds(data.at), { withSeconds: true })}` : "Nothing needs a look now.";
  }

  /** The refresh's state: when the lists were last true, or why they may no longer be. */
  setStatus(err) {
    this.status.classList.toggle("status-error", Boolean(err));
    this.status.textContent = err ? staleText(err, this.lastOk) : `Updated ${fmt.clock(this.lastOk, { withSeconds: true })}`;
  }

  render(data) {
    const problems = (data.problems ?? []).filter((p) => p.count > 0);
    this.sub = h("p", { class: "triage-sub" });
    this.status = h("p", { class: "status view-status", attrs: { role: "status" } });
    const head = h("div", { class: "triage-head" },
      h("a", { class: "back", attrs: { href: "#/" }, text: "← All activities" }),
      h("h1", { text: "Needs a look" }), this.sub, this.status);
    const groups = problems.map((p) => {
      const rows = (p.items ?? []).map((a) => {
        // The server's detail writes UTC; the page's times are local: its time beside it.
        const at = fmt.toSeconds(a.at);
        const id = a.booking_id ?? a.activity_id;
        return h("li", { class: "triage-row" },
          h("a", { attrs: { href: bookingHref(id), dir: "auto" }, text: id }),
          h("span", { class: "triage-activity" }, h("bdi", { text: a.activity_id ?? "no activity" }),
            [a.attributes_type, a.state].filter(Boolean).map((x) => [" · ", h("bdi", { text: x })])),
          h("span", { class: "triage-detail" },
            at === null ? null : h("time", { class: "triage-at tabular", attrs: { datetime: a.at }, title: fmt.fullDate(at), text: fmt.clock(at, { withSeconds: true }) }),
            at === null ? null : " ", h("bdi", { text: a.detail ?? "" })));
      });
      const shown = p.items?.length ?? 0;
      const more = `and ${p.count - shown} more`;
      return h("section", { class: "triage-group", data: { problem: p.problem } },
        h("h2", {}, h("strong", { text: String(p.count) }), ` ${p.title}`),
        h("ul", { class: "triage-list" }, rows),
        shown < p.count
          ? h("p", { class: "triage-more" }, WALL_FILTER[p.problem] ? h("a", { attrs: { href: WALL_FILTER[p.problem] }, text: more }) : more)
          : null);
    });
    clear(this.root).append(head, ...groups);
  }
}
