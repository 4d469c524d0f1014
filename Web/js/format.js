// Times and numbers as on-call reads them. Times are shown in the browser's time zone, 24-hour.

/** Seconds since 1970 from an RFC 3339 string or a number of Unix seconds; null otherwise. */
export function toSeconds(value) {
  if (value === null || value === undefined || value === "") return null;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "string") {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? null : ms / 1000;
  }
  return null;
}

/** The current time in Unix seconds. */
export const nowSeconds = () => Date.now() / 1000;

const clockFmt = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
const clockSecFmt = new Intl.DateTimeFormat(undefined, {
  hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23",
});
const dayFmt = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric" });
const yearDayFmt = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric" });

/** "14:32" (with the day when it is not today, and the year when it is not this year: a
 *  timestamp sent in milliseconds is tens of thousands of years ahead). */
export function clock(seconds, { withSeconds = false } = {}) {
  if (seconds === null || seconds === undefined) return "—";
  const d = new Date(seconds * 1000);
  // A date JavaScript cannot hold (a timestamp sent in microseconds): its number, as sent.
  if (Number.isNaN(d.getTime())) return `${seconds} s`;
  const text = (withSeconds ? clockSecFmt : clockFmt).format(d);
  const now = new Date();
  if (sameDay(d, now)) return text;
  return `${(d.getFullYear() === now.getFullYear() ? dayFmt : yearDayFmt).format(d)} ${text}`;
}

/** "2026-11-29 14:32:05" in local time, for tooltips and the timeline. */
export function fullDate(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  const d = new Date(seconds * 1000);
  if (Number.isNaN(d.getTime())) return `${seconds} s`;
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** The local day now, e.g. "2026-11-29": `clock` writes "14:32" for this day only, so a view
 *  that remembers the day it drew on can draw its times again once the day changed (midnight,
 *  a laptop waking up, a clock that jumped). */
export function today() {
  const d = new Date();
  return `${d.getFullYear()}-${d.getMonth() + 1}-${d.getDate()}`;
}

function sameDay(a, b) {
  return a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
}

/** A duration in seconds as "45 s", "12 min", "3 h 5 min", "2 d 4 h". */
export function duration(seconds) {
  const s = Math.max(0, Math.round(Math.abs(seconds)));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const hrs = Math.floor(m / 60);
  if (hrs < 48) return m % 60 ? `${hrs} h ${m % 60} min` : `${hrs} h`;
  const days = Math.floor(hrs / 24);
  return hrs % 24 ? `${days} d ${hrs % 24} h` : `${days} d`;
}

/** "5 min ago" / "in 5 min" relative to `now`. */
export function relative(seconds, now = nowSeconds()) {
  if (seconds === null || seconds === undefined) return "—";
  const delta = now - seconds;
  if (Math.abs(delta) < 1) return "now";
  return delta >= 0 ? `${duration(delta)} ago` : `in ${duration(delta)}`;
}

/** The `.timer` text style: "m:ss", or "h:mm:ss" from one hour on. */
export function timerText(elapsedSeconds) {
  const neg = elapsedSeconds < 0;
  const s = Math.floor(Math.abs(elapsedSeconds));
  const hrs = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  const p = (n) => String(n).padStart(2, "0");
  const body = hrs > 0 ? `${hrs}:${p(m)}:${p(sec)}` : `${m}:${p(sec)}`;
  return neg ? `-${body}` : body;
}

/** Milliseconds as "42 ms" or "1.2 s". */
export function latency(ms) {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

// From a million billion on, a number's digits say nothing on a lock screen (and past 2^53 they
// are not even exact): such a number is written in scientific notation, three significant digits.
const HUGE = 1e15;

/** Whether `n` is a number `number` writes in scientific notation. */
export const isHuge = (n) => Math.abs(n) >= HUGE;

/** A finite number as the locale writes it (`options` of toLocaleString), or, when absurdly
 *  large (1e300 minutes), compactly: "1.67E298", never hundreds of digits. */
export function number(n, options = {}) {
  if (isHuge(n)) return n.toLocaleString(undefined, { notation: "scientific", maximumSignificantDigits: 3 });
  return n.toLocaleString(undefined, options);
}

/** A short, readable rendering of any JSON value. */
export function jsonValue(v) {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}
