// A small set of line icons standing in for the SF Symbols that templates name. Drawn as SVG
// from this table (no icon font, no external file), tinted with `currentColor`.

import { svg } from "./dom.js";

// Each icon: a list of [tag, attributes]; "fill" marks shapes drawn solid.
const ICONS = {
  timer: [["circle", { cx: 12, cy: 13.5, r: 8 }], ["path", { d: "M12 13.5l3.2-3.2M10 2.5h4M12 2.5v3" }]],
  clock: [["circle", { cx: 12, cy: 12, r: 9.5 }], ["path", { d: "M12 6.5V12l3.5 2" }]],
  "car.fill": [
    ["path", { d: "M3.5 16.5v-4.2l2.1-5A2 2 0 0 1 7.4 6h9.2a2 2 0 0 1 1.8 1.3l2.1 5v4.2a1 1 0 0 1-1 1h-15a1 1 0 0 1-1-1z", fill: true }],
    ["path", { d: "M6.2 11.5l1.3-3.4h9l1.3 3.4z", dark: true }],
    ["circle", { cx: 7.3, cy: 14.2, r: 1.3, dark: true }],
    ["circle", { cx: 16.7, cy: 14.2, r: 1.3, dark: true }],
    ["path", { d: "M5 17.5v1.8M19 17.5v1.8" }],
  ],
  "star.fill": [["path", { d: "M12 2.8l2.8 5.8 6.3.9-4.6 4.4 1.1 6.3L12 17.2l-5.6 3 1.1-6.3L2.9 9.5l6.3-.9z", fill: true }]],
  "pause.fill": [["rect", { x: 6, y: 4.5, width: 4, height: 15, rx: 1, fill: true }], ["rect", { x: 14, y: 4.5, width: 4, height: 15, rx: 1, fill: true }]],
  "play.fill": [["path", { d: "M7 4.5v15l12-7.5z", fill: true }]],
  "stop.fill": [["rect", { x: 5.5, y: 5.5, width: 13, height: 13, rx: 2, fill: true }]],
  xmark: [["path", { d: "M6 6l12 12M18 6L6 18" }]],
  mappin: [["path", { d: "M12 21.5s-6.5-6-6.5-11a6.5 6.5 0 0 1 13 0c0 5-6.5 11-6.5 11z" }], ["circle", { cx: 12, cy: 10.5, r: 2.3 }]],
  "bell.fill": [["path", { d: "M6 16.5V11a6 6 0 0 1 12 0v5.5l1.5 1.8h-15zM10 20.5a2 2 0 0 0 4 0", fill: true }]],
  "bolt.fill": [["path", { d: "M13 2.5L4.5 13.5H11l-1 8 8.5-11H12z", fill: true }]],
  "person.fill": [["circle", { cx: 12, cy: 8, r: 4, fill: true }], ["path", { d: "M4 20.5c0-4 3.6-6.5 8-6.5s8 2.5 8 6.5z", fill: true }]],
  "shippingbox.fill": [["path", { d: "M3.5 7.5L12 3l8.5 4.5v9L12 21l-8.5-4.5z", fill: true }], ["path", { d: "M3.5 7.5L12 12l8.5-4.5M12 12v9", dark: true }]],
  "figure.run": [["circle", { cx: 14.5, cy: 4.5, r: 2, fill: true }], ["path", { d: "M7 10.5l3.5-2.5 3.5 1.5-2 5 3.5 3-1 4M11.5 14.5l-3 4.5H5M14 9.5l2.5 3H20" }]],
  "info.circle": [["circle", { cx: 12, cy: 12, r: 9.5 }], ["path", { d: "M12 11v6M12 7.5v.5" }]],
  "exclamationmark.triangle.fill": [["path", { d: "M12 3l10 17.5H2z", fill: true }], ["path", { d: "M12 9.5v5M12 17v.5", dark: true }]],
  "antenna.radiowaves.left.and.right": [["circle", { cx: 12, cy: 11, r: 1.6, fill: true }], ["path", { d: "M12 12.5V21M8.5 7.5a5 5 0 0 0 0 7M15.5 7.5a5 5 0 0 1 0 7M5.5 4.5a9 9 0 0 0 0 13M18.5 4.5a9 9 0 0 1 0 13" }]],
  "key.fill": [["circle", { cx: 8, cy: 12, r: 4.5 }], ["path", { d: "M12.5 12H21M18 12v3M21 12v2.5" }]],
  app: [["rect", { x: 4, y: 4, width: 16, height: 16, rx: 4.5, fill: true }]],
};

/** Whether a template's icon name is known here. */
export const hasIcon = (name) => Object.hasOwn(ICONS, name);

/** An SVG icon; unknown names draw a rounded square so a template typo stays visible. */
export function icon(name, { label = null, cls = null } = {}) {
  const shapes = ICONS[hasIcon(name) ? name : "app"];
  const root = svg("svg", {
    class: ["icon", cls],
    attrs: {
      viewBox: "0 0 24 24", width: "1em", height: "1em", "aria-hidden": label ? null : "true",
      role: label ? "img" : null, "aria-label": label, "data-icon": name,
    },
  });
  for (const [tag, a] of shapes) {
    const attrs = { ...a };
    const fill = attrs.fill, dark = attrs.dark;
    delete attrs.fill;
    delete attrs.dark;
    root.append(svg(tag, { class: fill ? "icon-fill" : dark ? "icon-cut" : "icon-line", attrs }));
  }
  return root;
}
