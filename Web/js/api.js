// The read API (DESIGN.md section 6). When the server has a read token, /api/* answers 401:
// the page then asks for the token once, keeps it in sessionStorage (this tab, this session)
// and sends it as a bearer token on every call.

import { h } from "./dom.js";
import * as fmt from "./format.js";

const KEY = "lam.readToken";
// A server that hangs (stopped, overloaded) never answers: without a deadline a view would keep
// waiting and look live. The views' periodic reads (the wall's list, triage, channels) are cheap
// on a healthy server: a bit over their refresh intervals (4–5 s), so a slow answer still counts
// while a hung one shows as stale at the next refresh.
export const TIMEOUT_MS = 6000;
// A history read (`/api/bookings/{id}`, `?at=`, `/api/activities/{id}`) replays every event of its
// booking or activity, and a healthy but busy server may make it wait: up to 5 s for its turn
// (then it answers 503 itself), then the replay (a 100,000-event booking read by 8 clients at
// once took about 1.6 s each on 2 processors: docs/OPERATIONS.md). 20 s leaves the replay
// some ten times that, and stays under the server's 30 s `--connection-timeout`.
export const HISTORY_TIMEOUT_MS = 20000;
// A read unanswered this long is shown as waiting (not stale: it has not failed yet).
export const WAITING_AFTER_MS = 2000;

export class NotFound extends Error {}

/** GET a JSON document from the API, asking for the read token when the server wants one.
 *  `timeoutMs`: TIMEOUT_MS for the periodic reads, HISTORY_TIMEOUT_MS for history reads. */
export async function getJSON(path, { signal, timeoutMs = TIMEOUT_MS } = {}) {
  for (;;) {
    const token = sessionStorage.getItem(KEY);
    const headers = { Accept: "application/json" };
    if (token) headers.Authorization = `Bearer ${token}`;
    const deadline = AbortSignal.timeout(timeoutMs);
    const both = signal ? AbortSignal.any([signal, deadline]) : deadline;
    try {
      const res = await fetch(path, { headers, signal: both, cache: "no-store" });
      if (res.status === 401) {
        await askForToken(token ? "That token was not accepted." : null);
        continue;
      }
      if (res.status === 404) throw new NotFound(await errorText(res));
      if (!res.ok) throw new Error(`${res.status}: ${await errorText(res)}`);
      return await res.json(); // the body too must come before the deadline
    } catch (err) {
      if (deadline.aborted && !signal?.aborted) throw new Error(`no answer within ${timeoutMs / 1000} s`);
      throw err;
    }
  }
}

/** The words of a view whose refresh failed: it keeps the data of `lastOk` (Unix seconds). */
export function staleText(err, lastOk) {
  const since = lastOk ? ` — showing the data of ${fmt.clock(lastOk, { withSeconds: true })}` : "";
  return `Cannot refresh (${err.message})${since}; retrying`;
}

/** The words of a view whose refresh has waited `waitedMs` for the server (not failed yet): it
 *  keeps the data of `lastOk` (Unix seconds) meanwhile. */
export function waitingText(waitedMs, lastOk, timeoutMs) {
  const since = lastOk ? `Updated ${fmt.clock(lastOk, { withSeconds: true })} · ` : "";
  return `${since}refreshing: waiting ${Math.floor(waitedMs / 1000)} s for the server (a busy server may take up to ${timeoutMs / 1000} s)`;
}

async function errorText(res) {
  try {
    const body = await res.json();
    return body && typeof body.error === "string" ? body.error : res.statusText;
  } catch {
    return res.statusText;
  }
}

let pending = null;

/** Shows the token form (once, however many calls are waiting) and resolves when submitted. */
function askForToken(problem) {
  if (pending) return pending;
  sessionStorage.removeItem(KEY);
  pending = new Promise((resolve) => {
    const input = h("input", {
      class: "token-input",
      attrs: { type: "password", name: "token", autocomplete: "current-password", required: true, "aria-label": "Read token", placeholder: "Read token" },
    });
    const dialog = h("div", { class: "token-overlay", attrs: { role: "dialog", "aria-modal": "true", "aria-labelledby": "token-title" } },
      h("form", {
        class: "token-form",
        on: {
          submit: (ev) => {
            ev.preventDefault();
            const value = input.value.trim();
            if (!value) return;
            sessionStorage.setItem(KEY, value);
            dialog.remove();
            pending = null;
            resolve();
          },
        },
      },
        h("h2", { attrs: { id: "token-title" }, text: "Read token required" }),
        h("p", { text: "This monitor protects booking ids and driver names. Enter the read token; it is kept for this browser tab only." }),
        problem ? h("p", { class: "token-problem", text: problem }) : null,
        input,
        h("button", { attrs: { type: "submit" }, class: "primary", text: "Continue" })));
    document.body.append(dialog);
    input.focus();
  });
  return pending;
}
