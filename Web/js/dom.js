// Safe DOM building. Nothing here ever parses a string as HTML: every string becomes a text
// node or an attribute value, so a content-state such as `<img src=x onerror=…>` stays text.

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * Creates an element. `props`: `class` (string or array), `text`, `title`, `attrs` (object of
 * attribute values), `data` (dataset), `on` (event listeners). Children may be nodes, strings
 * (inserted as text), arrays, or null/false (skipped).
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  applyProps(el, props);
  append(el, children);
  return el;
}

/** Creates an SVG element (for icons); same `props` as `h`. */
export function svg(tag, props = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  applyProps(el, props);
  append(el, children);
  return el;
}

function applyProps(el, props) {
  if (!props) return;
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    switch (key) {
      case "class":
        for (const c of [].concat(value)) if (c) el.classList.add(...String(c).split(/\s+/).filter(Boolean));
        break;
      case "text":
        el.textContent = String(value);
        break;
      case "attrs":
        for (const [name, v] of Object.entries(value)) {
          if (v === undefined || v === null || v === false) continue;
          if (/^on/i.test(name) || name.toLowerCase() === "style") throw new Error(`refusing attribute ${name}`);
          el.setAttribute(name, v === true ? "" : String(v));
        }
        break;
      case "data":
        for (const [name, v] of Object.entries(value)) if (v !== undefined && v !== null) el.dataset[name] = String(v);
        break;
      case "on":
        for (const [type, fn] of Object.entries(value)) el.addEventListener(type, fn);
        break;
      case "title":
        el.setAttribute("title", String(value));
        break;
      default:
        throw new Error(`unknown prop ${key}`);
    }
  }
}

/** Appends children as described for `h`. */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Removes every child of `el`. */
export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}
