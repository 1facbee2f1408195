// Syntax highlighting of code blocks, loaded lazily: the highlighter
// (highlighter.ts, about a megabyte) is a script beside webview.js that is
// only fetched when an answer first shows a code block in a language it
// knows, so a panel without code pays nothing for it. Tokens are coloured
// through the CSSOM (element.style), which the CSP allows, unlike style
// attributes. The theme follows VS Code's: Light+ or Dark+ (high contrast
// themes get GitHub's high-contrast ones), switched with the body's class.

export type Token = { content: string; color?: string; fontStyle?: number };
export type HighlightApi = {
  has(lang: string): boolean;
  tokens(code: string, lang: string, theme: string): Token[][];
};

// Names answers give fences, as the grammars call them.
const aliases: Record<string, string> = {
  ts: "typescript",
  js: "javascript",
  jsx: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  py: "python",
  sh: "shellscript",
  bash: "shellscript",
  shell: "shellscript",
  zsh: "shellscript",
  console: "shellscript",
  rs: "rust",
  yml: "yaml",
  golang: "go",
  h: "c",
  makefile: "make",
  docker: "dockerfile",
  patch: "diff",
};

let api: Promise<HighlightApi | null> | undefined;
const pending = new Set<HTMLElement>();
const done = new Set<HTMLElement>();
let scheduled = false;

function load(): Promise<HighlightApi | null> {
  if (api) return api;
  api = new Promise((resolve) => {
    const me = document.querySelector<HTMLScriptElement>('script[src*="webview.js"]');
    if (!me) return resolve(null);
    const s = document.createElement("script");
    s.nonce = me.nonce ?? "";
    s.src = me.src.replace(/webview\.js(?=$|\?)/, "highlight.js");
    s.onload = () => {
      const p = (window as unknown as { darmanHighlight?: Promise<HighlightApi> }).darmanHighlight;
      if (!p) return resolve(null);
      p.then(resolve, () => resolve(null));
    };
    s.onerror = () => resolve(null); // plain code blocks, as before
    document.head.append(s);
  });
  return api;
}

function theme(): string {
  const c = document.body.classList;
  if (c.contains("vscode-high-contrast-light")) return "github-light-high-contrast";
  if (c.contains("vscode-high-contrast")) return "github-dark-high-contrast";
  return c.contains("vscode-dark") ? "dark-plus" : "light-plus";
}

/** highlightLater colours a code element (class language-X) once the highlighter is there. */
export function highlightLater(code: HTMLElement, lang: string): void {
  const name = aliases[lang.toLowerCase()] ?? lang.toLowerCase();
  if (!name) return;
  code.dataset.lang = name;
  pending.add(code);
  if (scheduled) return;
  scheduled = true;
  // After the frame that shows the block: the stream's batch is not held up.
  setTimeout(() => void run(), 0);
}

async function run(): Promise<void> {
  const hl = await load();
  scheduled = false;
  const start = performance.now();
  for (const code of pending) {
    pending.delete(code);
    // A block the stream replaced since (a tail rendered again) is gone.
    if (!hl || !code.isConnected || !hl.has(code.dataset.lang ?? "")) continue;
    paint(hl, code);
    done.add(code);
  }
  if (pending.size === 0) performance.measure("darman:highlight", { start, end: performance.now() });
}

function paint(hl: HighlightApi, code: HTMLElement): void {
  const text = code.dataset.source ?? code.textContent ?? "";
  code.dataset.source = text;
  const lines = hl.tokens(text.replace(/\n$/, ""), code.dataset.lang ?? "", theme());
  const out = document.createDocumentFragment();
  lines.forEach((line, i) => {
    if (i > 0) out.append("\n");
    for (const t of line) {
      const span = document.createElement("span");
      span.textContent = t.content;
      if (t.color) span.style.color = t.color;
      if (t.fontStyle && t.fontStyle & 1) span.style.fontStyle = "italic";
      if (t.fontStyle && t.fontStyle & 2) span.style.fontWeight = "bold";
      out.append(span);
    }
  });
  if (text.endsWith("\n")) out.append("\n");
  code.replaceChildren(out);
  code.classList.add("highlighted");
}

// VS Code changes the body's class with the theme: paint again.
new MutationObserver(() => {
  void api?.then((hl) => {
    if (!hl) return;
    for (const code of done) {
      if (!code.isConnected) done.delete(code);
      else paint(hl, code);
    }
  });
}).observe(document.body, { attributes: true, attributeFilter: ["class"] });
