// A small element builder. Text always goes in as text nodes; the only HTML
// the webview inserts is sanitized markdown (markdown.ts). No `style`
// attributes: the CSP forbids them, so layout lives in style.css and the few
// computed sizes are set through element.style.
type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (name === "class") el.className = String(value);
      else el.setAttribute(name, value === true ? "" : String(value));
    }
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child);
  }
  return el;
}

// button builds a real <button type="button">, reachable by Tab and Enter.
export function button(label: string, attrs: Attrs | null, onClick: (ev: MouseEvent) => void, ...children: Child[]): HTMLButtonElement {
  const b = h("button", { type: "button", ...attrs }, ...(children.length ? children : [label]));
  if (children.length && !b.hasAttribute("aria-label")) b.setAttribute("aria-label", label);
  if (!b.title) b.title = label;
  b.addEventListener("click", onClick);
  return b;
}

export function basename(uri: string): string {
  const clean = uri.replace(/[?#].*$/, "").replace(/\/+$/, "");
  const slash = clean.lastIndexOf("/");
  let name = slash >= 0 ? clean.slice(slash + 1) : clean;
  try {
    name = decodeURIComponent(name);
  } catch {
    // a malformed escape: show it as it is
  }
  return name || uri;
}

export function formatCount(n: number): string {
  if (n >= 10_000_000) return `${Math.round(n / 1_000_000)}M`;
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 10_000) return `${Math.round(n / 1000)}k`;
  if (n >= 1000) return `${(n / 1000).toFixed(1)}k`;
  return String(n);
}

