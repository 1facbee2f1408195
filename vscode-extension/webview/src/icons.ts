// Line icons drawn as inline SVG (16×16, stroked with currentColor so they
// follow the theme). Built with createElementNS: no markup, no image loads.
import type { ToolKind, ToolStatus } from "../../shared/protocol";

const paths: Record<string, string[]> = {
  read: ["M4 1.5h5l3 3v10H4z", "M9 1.5v3h3", "M6 8h4M6 10.5h4"],
  edit: ["M10.5 2.5l3 3-8 8H2.5v-3z", "M9 4l3 3"],
  delete: ["M3 4.5h10", "M6 4.5V2.5h4v2", "M4.5 4.5l.7 9h5.6l.7-9"],
  move: ["M2 8h11", "M9.5 4.5L13 8l-3.5 3.5"],
  search: ["M6.5 2.5a4 4 0 1 1 0 8 4 4 0 0 1 0-8z", "M9.5 9.5l4 4"],
  execute: ["M1.5 2.5h13v11h-13z", "M4 6l2 2-2 2", "M8 10.5h4"],
  think: ["M8 1.5a4.5 4.5 0 0 1 2.5 8.2V11.5h-5V9.7A4.5 4.5 0 0 1 8 1.5z", "M6 13.5h4"],
  fetch: ["M8 1.5a6.5 6.5 0 1 1 0 13 6.5 6.5 0 0 1 0-13z", "M1.5 8h13", "M8 1.5c-2.5 3-2.5 10 0 13M8 1.5c2.5 3 2.5 10 0 13"],
  other: ["M8 5.5a2.5 2.5 0 1 1 0 5 2.5 2.5 0 0 1 0-5z", "M8 1v2M8 13v2M1 8h2M13 8h2M3 3l1.5 1.5M11.5 11.5L13 13M3 13l1.5-1.5M11.5 4.5L13 3"],
  completed: ["M3 8.5l3 3 7-7"],
  failed: ["M4 4l8 8M12 4l-8 8"],
  pending: ["M8 2.5a5.5 5.5 0 1 1 0 11 5.5 5.5 0 0 1 0-11z"],
  in_progress: ["M8 2.5a5.5 5.5 0 0 1 5.5 5.5"],
  plan_pending: ["M8 3a5 5 0 1 1 0 10A5 5 0 0 1 8 3z"],
  plan_in_progress: ["M8 3a5 5 0 1 1 0 10A5 5 0 0 1 8 3z", "M8 5.5v2.5l2 1.5"],
  plan_completed: ["M8 3a5 5 0 1 1 0 10A5 5 0 0 1 8 3z", "M5.5 8.2l1.8 1.8 3.3-3.5"],
  info: ["M8 1.5a6.5 6.5 0 1 1 0 13 6.5 6.5 0 0 1 0-13z", "M8 7v4.5M8 4.5v.5"],
  warning: ["M8 1.5l6.5 12h-13z", "M8 6v3.5M8 11.5v.5"],
  error: ["M8 1.5a6.5 6.5 0 1 1 0 13 6.5 6.5 0 0 1 0-13z", "M5.5 5.5l5 5M10.5 5.5l-5 5"],
  close: ["M4 4l8 8M12 4l-8 8"],
  add: ["M8 2.5v11M2.5 8h11"],
  history: ["M2.5 8a5.5 5.5 0 1 0 1.6-3.9", "M2 2.5v3h3", "M8 5v3.5l2.5 1.5"],
  send: ["M2 2.5l12 5.5-12 5.5 2-5.5z", "M4 8h5"],
  stop: ["M4 4h8v8H4z"],
  copy: ["M5.5 5.5h8v8h-8z", "M10.5 5.5v-3h-8v8h3"],
  insert: ["M8 2v8", "M5 7l3 3 3-3", "M2.5 13.5h11"],
  apply: ["M4 1.5h5l3 3v4", "M4 1.5v13h4", "M9 12.5l2 2 3.5-4"],
  diff: ["M4.5 2v8M1.5 5h6", "M9 11.5h5.5", "M2 14h12"],
  rename: ["M10.5 2.5l3 3-8 8H2.5v-3z"],
  file: ["M4 1.5h5l3 3v10H4z", "M9 1.5v3h3"],
};

export function icon(name: string, className = "icon"): SVGSVGElement {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("class", `${className} icon-${name}`);
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  for (const d of paths[name] ?? paths.other) {
    const p = document.createElementNS(ns, "path");
    p.setAttribute("d", d);
    svg.append(p);
  }
  return svg;
}

export function kindIcon(kind: ToolKind): SVGSVGElement {
  return icon(kind in paths ? kind : "other", "icon kind");
}

export function statusIcon(status: ToolStatus): SVGSVGElement {
  return icon(status in paths ? status : "pending", "icon status");
}
