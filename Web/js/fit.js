// Text in the Dynamic Island's compact and minimal presentations, which cannot grow, fits its
// region the way SwiftUI fits a Text in such a frame: smaller first (down to MIN_SCALE of its
// size, as `.minimumScaleFactor(0.7)`), then in its short form when the value has one ("2h 5m"
// for "2 h 5 min"), and at last cut at its end with an ellipsis — never clipped at its start,
// where the digits that matter are.
//
// Fitting needs the layout, so it runs once the element is in the page and again whenever its
// size or its region's changes (a ticking timer reaching "10:00:00", a narrower window), from a
// ResizeObserver, batched into the next animation frame so that the size it sets does not feed
// back into the same observation.
//
// Two ways to measure "too wide". In the compact and minimal islands each region holds one value,
// and the value fits when its region does not overflow. A region marked `fit-own` (the `small`
// family: a whole layout of rows and columns) has several texts: each fits when its own box, as
// wide as its layout lets it be, does not overflow; there a ticking text is refitted when its text
// changes too, since its box may not change size (a MutationObserver).

const MIN_SCALE = 0.7;
const STEP = 0.02; // of the natural size, per correction when the text does not scale linearly

const observer = new ResizeObserver(onResize);
const mutations = new MutationObserver(onMutation);
const pending = new Set();
let frame = 0;

/** Whether `el` fits within its own box (a `fit-own` region) rather than by its region's width. */
const ownBox = (region) => region.classList.contains("fit-own");

/**
 * Makes `el` (a text or timer in a `.di-region`) fit its region from now on. `short` is the
 * value's shorter form, shown only when the full one does not fit even at the smallest size.
 */
export function fitText(el, { short = null } = {}) {
  el.classList.add("t-fit");
  if (short && short !== el.textContent) {
    el.__fit = { full: el.textContent, short };
  }
  observer.observe(el);
  return el;
}

function onResize(entries) {
  for (const { target } of entries) {
    if (!target.isConnected) {
      observer.unobserve(target); // removed from the page: let it go
      continue;
    }
    if (target.classList.contains("di-region")) {
      for (const el of target.querySelectorAll(".t-fit")) pending.add(el);
      continue;
    }
    const region = target.closest(".di-region");
    if (region && !region.__fitObserved) {
      region.__fitObserved = true;
      observer.observe(region);
    }
    if (region && ownBox(region) && !target.__fitWatched) {
      target.__fitWatched = true;
      mutations.observe(target, { childList: true, characterData: true, subtree: true });
    }
    pending.add(target);
  }
  if (pending.size && !frame) frame = requestAnimationFrame(fitPending);
}

function onMutation(records) {
  for (const { target } of records) {
    const el = (target.nodeType === Node.ELEMENT_NODE ? target : target.parentElement)?.closest(".t-fit");
    if (el?.isConnected) pending.add(el);
  }
  if (pending.size && !frame) frame = requestAnimationFrame(fitPending);
}

function fitPending() {
  frame = 0;
  const els = [...pending];
  pending.clear();
  for (const el of els) if (el.isConnected) fit(el);
  mutations.takeRecords(); // the texts fitting itself swapped are not news
}

/** How far the region's content overflows it, in px (0 when it fits). */
function overflow(region) {
  return Math.max(0, region.scrollWidth - region.clientWidth);
}

/** The width of `el`'s text as drawn, in px (not rounded, unlike scrollWidth). */
function textWidth(el) {
  const range = document.createRange();
  range.selectNodeContents(el);
  return range.getBoundingClientRect().width;
}

/** How far `el`'s text overflows its own box, in px (0 when it fits). */
function ownOverflow(el) {
  return Math.max(0, textWidth(el) - el.getBoundingClientRect().width);
}

function fit(el) {
  const region = el.closest(".di-region");
  if (!region) return;
  const own = ownBox(region);
  const m = own
    ? { over: () => ownOverflow(el), width: () => textWidth(el) }
    : { over: () => overflow(region), width: () => el.getBoundingClientRect().width };
  // From the natural state: full text, template size, no cut.
  el.style.fontSize = "";
  el.classList.remove("t-fit-cut");
  if (el.__fitTitled) el.removeAttribute("title"); // only the title fitting gave it
  el.__fitTitled = false;
  if (el.__fit) el.textContent = el.__fit.full;
  if (m.over() <= 0.5) return;
  const natural = parseFloat(getComputedStyle(el).fontSize);
  if (shrink(el, m, natural)) return;
  if (el.__fit) {
    el.textContent = el.__fit.short;
    setTitle(el, el.__fit.full);
    el.style.fontSize = "";
    if (shrink(el, m, natural)) return;
  }
  // Still too wide at the smallest size: cut the end, keep the start.
  el.style.fontSize = `${(natural * MIN_SCALE).toFixed(2)}px`;
  el.classList.add("t-fit-cut");
  setTitle(el, el.__fit?.full ?? el.textContent);
}

/** What a short form or an ellipsis hides stays readable on hover (a property: text). */
function setTitle(el, text) {
  if (el.hasAttribute("title") && !el.__fitTitled) return; // the template's own (lines: 1)
  el.title = text;
  el.__fitTitled = true;
}

/** Shrinks `el` until it no longer overflows (`m`: how that is measured), down to MIN_SCALE;
 *  whether it fits. */
function shrink(el, m, natural) {
  const width = m.width();
  const over = m.over();
  if (over <= 0.5) return true;
  let scale = width > 0 ? (width - over) / width : 0;
  if (scale < MIN_SCALE) return false;
  for (; scale >= MIN_SCALE; scale -= STEP) {
    el.style.fontSize = `${(natural * scale).toFixed(2)}px`;
    if (m.over() <= 0.5) return true;
  }
  return false;
}
