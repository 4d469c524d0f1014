// On-call triage (#/triage): what needs a look now, grouped by problem with counts, each
// activity linking to its booking. The server decides what is a problem (GET /api/triage, one
// rule set beside the state engine); this page only lists what it found.

import { h, clear } from "./dom.js";
import { getJSON } from "./api.js";
import { bookingHref } from "./card.js";
import * as fmt from "./format.js";

const REFRESH_MS = 5000;

export class TriageView {
  constructor({ root }) {
    this.root = root;
    this.timer = null;
    this.seq = 0;
    this.sig = null;
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
      const sig = JSON.stringify(data.problems);
      if (sig !== this.sig) {
        this.sig = sig;
        this.render(data);
      }
    } catch (err) {
      if (seq !== this.seq) return;
      console.error(err);
      if (this.sig === null) clear(this.root).append(h("div", { class: "empty", text: `Cannot load the triage view: ${err.message}` }));
    }
    if (seq === this.seq) this.timer = setTimeout(() => this.load(), REFRESH_MS);
  }

  render(data) {
    const problems = (data.problems ?? []).filter((p) => p.count > 0);
    const total = problems.reduce((n, p) => n + p.count, 0);
    const head = h("div", { class: "triage-head" },
      h("a", { class: "back", attrs: { href: "#/" }, text: "← All activities" }),
      h("h1", { text: "Needs a look" }),
      h("p", { class: "triage-sub", text: total ? `${total} problem${total === 1 ? "" : "s"} now, as of ${fmt.clock(fmt.toSeconds(data.at), { withSeconds: true })}` : "Nothing needs a look now." }));
    const groups = problems.map((p) => {
      const rows = (p.activities ?? []).map((a) => h("li", { class: "triage-row" },
        h("a", { attrs: { href: bookingHref(a.booking_id ?? a.activity_id) }, text: a.booking_id ?? a.activity_id }),
        h("span", { class: "triage-activity", text: `${a.activity_id} · ${a.attributes_type} · ${a.state}` }),
        h("span", { class: "triage-detail", text: a.detail })));
      const shown = p.activities?.length ?? 0;
      return h("section", { class: "triage-group", data: { problem: p.problem } },
        h("h2", {}, h("strong", { text: String(p.count) }), ` ${p.title}`),
        h("ul", { class: "triage-list" }, rows),
        shown < p.count ? h("p", { class: "triage-more", text: `and ${p.count - shown} more` }) : null);
    });
    clear(this.root).append(head, ...groups);
  }
}
