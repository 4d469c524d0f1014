// The read API (DESIGN.md section 6). When the server has a read token, /api/* answers 401:
// the page then asks for the token once, keeps it in sessionStorage (this tab, this session)
// and sends it as a bearer token on every call.

import { h } from "./dom.js";

const KEY = "lam.readToken";

export class NotFound extends Error {}

/** GET a JSON document from the API, asking for the read token when the server wants one. */
export async function getJSON(path, { signal } = {}) {
  for (;;) {
    const token = sessionStorage.getItem(KEY);
    const headers = { Accept: "application/json" };
    if (token) headers.Authorization = `Bearer ${token}`;
    const res = await fetch(path, { headers, signal, cache: "no-store" });
    if (res.status === 401) {
      await askForToken(token ? "That token was not accepted." : null);
      continue;
    }
    if (res.status === 404) throw new NotFound(await errorText(res));
    if (!res.ok) throw new Error(`${res.status}: ${await errorText(res)}`);
    return res.json();
  }
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
