// Entry point: the wall at #/ (filters in the hash: #/?state=stale&type=…&q=…), the booking
// lookup at #/booking/<id>[?at=<RFC 3339>], triage at #/triage and the broadcast channels at
// #/channels[/<id>]. The views live in one page so going back to the wall keeps its scroll
// position and filters.

import { Wall } from "./js/wall.js";
import { BookingView } from "./js/booking.js";
import { TriageView } from "./js/triage.js";
import { ChannelsView } from "./js/channels.js";

const $ = (sel) => document.querySelector(sel);

const wallView = $("#wall-view");
const bookingView = $("#booking-view");
const triageView = $("#triage-view");
const channelsView = $("#channels-view");
const toolbar = $("#toolbar");

const wall = new Wall({
  root: wallView,
  onFilters: (f) => {
    const p = new URLSearchParams();
    if (f.state) p.set("state", f.state);
    if (f.type) p.set("type", f.type);
    if (f.q) p.set("q", f.q);
    const qs = p.toString();
    lastWallHash = qs ? `#/?${qs}` : "#/";
    history.replaceState(null, "", lastWallHash);
  },
});
wall.bindControls({
  stateButtons: [...document.querySelectorAll(".filters [data-state]")],
  typeSelect: $("#type-filter"),
  searchForm: $("#search-form"),
  searchInput: $("#search"),
  status: $("#status"),
});
const booking = new BookingView({ root: bookingView });
const triage = new TriageView({ root: triageView });
const channels = new ChannelsView({ root: channelsView });

let wallScroll = 0;
let lastWallHash = "#/";
let onWall = null;

function route() {
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, qs = ""] = hash.split("?");
  const params = new URLSearchParams(qs);
  const m = path.match(/^\/booking\/(.+)$/);
  const ch = path.match(/^\/channels(?:\/(.+))?$/);
  if (ch) {
    let id = null;
    if (ch[1]) {
      try {
        id = decodeURIComponent(ch[1]);
      } catch {
        id = ch[1];
      }
    }
    if (onWall !== false) wallScroll = window.scrollY;
    onWall = false;
    wall.stop();
    booking.hide();
    triage.hide();
    wallView.hidden = true;
    bookingView.hidden = true;
    triageView.hidden = true;
    toolbar.classList.add("toolbar-booking");
    channelsView.hidden = false;
    document.title = id === null ? "Channels · Live Activity Monitor" : `Channel ${id} · Live Activity Monitor`;
    channels.show(id);
    window.scrollTo({ top: 0 });
    return;
  }
  channels.hide();
  channelsView.hidden = true;
  if (path === "/triage") {
    if (onWall !== false) wallScroll = window.scrollY;
    onWall = false;
    wall.stop();
    booking.hide();
    wallView.hidden = true;
    bookingView.hidden = true;
    toolbar.classList.add("toolbar-booking");
    triageView.hidden = false;
    document.title = "Needs a look · Live Activity Monitor";
    triage.show();
    window.scrollTo({ top: 0 });
    return;
  }
  triage.hide();
  triageView.hidden = true;
  if (m) {
    let id;
    try {
      id = decodeURIComponent(m[1]);
    } catch {
      id = m[1];
    }
    if (onWall !== false) wallScroll = window.scrollY;
    onWall = false;
    wall.stop();
    wallView.hidden = true;
    toolbar.classList.add("toolbar-booking");
    bookingView.hidden = false;
    // Date.parse keeps milliseconds. A "+01:00" typed into the URL reads as " 01:00" here.
    const atParam = params.get("at")?.replace(/ /g, "+");
    const atMs = atParam ? Date.parse(atParam) : NaN;
    document.title = `Booking ${id} · Live Activity Monitor`;
    const other = booking.id !== id;
    booking.show(id, Number.isNaN(atMs) ? null : atMs / 1000);
    if (other) window.scrollTo({ top: 0 });
    return;
  }
  const wasBooking = onWall === false;
  if (wasBooking && hash === "/" && lastWallHash !== "#/") {
    // "All activities" from a booking returns to the wall as it was left, filters included.
    history.replaceState(null, "", lastWallHash);
    return route();
  }
  booking.hide();
  bookingView.hidden = true;
  toolbar.classList.remove("toolbar-booking");
  wallView.hidden = false;
  document.title = "Live Activity Monitor";
  wall.setFilters({ state: params.get("state") ?? "", type: params.get("type") ?? "", q: params.get("q") ?? "" }, { fromUrl: true });
  onWall = true;
  lastWallHash = location.hash || "#/";
  wall.start();
  if (wasBooking) requestAnimationFrame(() => window.scrollTo({ top: wallScroll }));
}

window.addEventListener("hashchange", route);
route();
