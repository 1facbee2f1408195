// Markdown for the stream: markdown-it with raw HTML off, then DOMPurify on
// what it produced, so nothing a model writes can run script, load a remote
// resource or carry a style attribute the CSP would refuse.
//
// A streamed answer grows by small chunks. MarkdownView renders it in
// segments: everything before the last place where the text can be split
// without changing its rendering (a blank line or a fence, outside any
// fence) is settled and rendered once; only the tail after it is rendered
// again when text arrives, and a tail that is a code block still being
// written is only a text update. A turn of thousands of chunks so costs
// about one render of the answer, not one per chunk.
import MarkdownIt from "markdown-it";
import DOMPurify from "dompurify";
import { h } from "./dom";
import { highlightLater } from "./highlight";
import { icon } from "./icons";

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

// Table alignment as a class: the CSP refuses style attributes.
md.core.ruler.push("align_class", (state) => {
  for (const t of state.tokens) {
    if (t.type !== "th_open" && t.type !== "td_open") continue;
    const style = String(t.attrGet("style") ?? "");
    const m = style && /text-align:\s*(left|right|center)/.exec(style);
    if (!style) continue;
    t.attrs = (t.attrs ?? []).filter(([name]) => name !== "style");
    if (m) t.attrJoin("class", `align-${m[1]}`);
  }
});

// A code block's fence may name its file ("```go main.go", "```go:main.go",
// "```go title=\"main.go\""): kept on the <code> for "Apply to file".
md.core.ruler.push("fence_file", (state) => {
  for (const t of state.tokens) {
    const file = t.type === "fence" ? fenceFile(t.info) : "";
    if (file) t.attrSet("data-file", file);
  }
});

// fenceFile is the file a fence's info string names, or "".
export function fenceFile(info: string): string {
  const words = info.trim().split(/\s+/);
  const first = /^[\w+#.-]+:(\S+)$/.exec(words[0] ?? "");
  if (first) return first[1];
  for (const w of words.slice(1)) {
    const named = /^(?:title|file|filename|path)=["']?([^"'\s]+)["']?$/.exec(w);
    if (named) return named[1];
    if (/^[^=\s"'`]+[./][^=\s"'`]*$/.test(w) && !w.startsWith("-")) return w;
  }
  return "";
}

// Images: only data: images can show under the CSP; anything else becomes a
// link with the alt text, so no request leaves the webview.
md.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  const src = String(token.attrGet("src") ?? "");
  const alt = String(self.renderInlineAsText(token.children ?? [], options, env));
  if (/^data:image\/(png|gif|jpeg|webp);/i.test(src)) {
    return `<img src="${md.utils.escapeHtml(src)}" alt="${md.utils.escapeHtml(alt)}">`;
  }
  return `<a href="${md.utils.escapeHtml(src)}">${md.utils.escapeHtml(alt || src)}</a>`;
};

// Links may go to the web, to mail or within the answer; DOMPurify's own
// URI check (which also vets every other attribute value) runs first.
const allowedURI = /^(?:(?:https?|mailto):|#)/i;

DOMPurify.addHook("uponSanitizeAttribute", (_node, data) => {
  // No style attribute survives, whatever produced it.
  if (data.attrName === "style") data.keepAttr = false;
});

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.nodeName === "A") {
    const a = node as HTMLAnchorElement;
    const href = a.getAttribute("href");
    if (href && !allowedURI.test(href)) a.removeAttribute("href");
    if (a.hasAttribute("href")) {
      a.setAttribute("rel", "noopener noreferrer");
      a.title = a.getAttribute("href") ?? "";
    }
  }
});

const purifyConfig = {
  RETURN_DOM_FRAGMENT: true as const,
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed", "svg", "math"],
  FORBID_ATTR: ["style", "id", "name"],
};

// renderMarkdown turns text into a sanitized fragment, code blocks framed
// with their Copy and Insert buttons.
export function renderMarkdown(text: string): DocumentFragment {
  const fragment = DOMPurify.sanitize(md.render(text), purifyConfig);
  for (const pre of Array.from(fragment.querySelectorAll("pre"))) {
    const code = pre.querySelector("code");
    const lang = /language-([\w+#.-]+)/.exec(code?.className ?? "")?.[1] ?? "";
    const frame = codeFrame(lang, code?.getAttribute("data-file") ?? "");
    pre.replaceWith(frame);
    frame.append(pre);
    if (code && lang) highlightLater(code, lang);
  }
  return fragment;
}

// The languages of a block of shell commands, which "Run in terminal" takes.
const shellLangs = new Set(["sh", "bash", "shell", "zsh", "fish", "console", "shellsession", "powershell", "pwsh", "ps1", "bat", "cmd"]);

// codeFrame is a code block's frame and bar, the <pre> to be appended.
function codeFrame(lang: string, file: string): HTMLElement {
  const shell = shellLangs.has(lang.toLowerCase());
  const applyLabel = file ? `Apply to ${file}` : "Apply to the selection";
  const bar = h(
    "div",
    { class: "code-bar" },
    h("span", { class: "code-lang" }, lang),
    shell
      ? h(
          "button",
          { type: "button", class: "icon-button", "data-action": "terminal", title: "Run in terminal", "aria-label": "Run in terminal (you press Enter)" },
          icon("execute"),
        )
      : null,
    h("button", { type: "button", class: "icon-button", "data-action": "copy", title: "Copy", "aria-label": "Copy code" }, icon("copy")),
    h(
      "button",
      { type: "button", class: "icon-button", "data-action": "insert", title: "Insert at cursor", "aria-label": "Insert code at cursor" },
      icon("insert"),
    ),
    shell
      ? null
      : h("button", { type: "button", class: "icon-button", "data-action": "apply", title: applyLabel, "aria-label": applyLabel }, icon("apply")),
  );
  return h("div", { class: "code-block", "data-file": file || null }, bar);
}

// codeOf finds the code a code-bar button belongs to.
export function codeOf(button: Element): string | null {
  const pre = button.closest(".code-block")?.querySelector("pre");
  if (!pre) return null;
  return (pre.textContent ?? "").replace(/\n$/, "");
}

const fenceOpen = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const fenceClose = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

// opensFence returns the fence a line opens ("```", "~~~~"), or "".
function opensFence(line: string): string {
  const m = fenceOpen.exec(line);
  if (!m) return "";
  // A backtick fence's info string may not hold a backtick.
  if (m[1][0] === "`" && m[2].includes("`")) return "";
  return m[1];
}

function closesFence(line: string, fence: string): boolean {
  const m = fenceClose.exec(line);
  return !!m && m[1][0] === fence[0] && m[1].length >= fence.length;
}

// stableCut returns the offset of the last place after `from` where text
// can be split into two markdown documents that render as the whole does.
// Outside a fence, a line starting with a non-space (no list continuation,
// no indented code) is such a place when it follows a blank line or a
// closing fence; a fence opening at column 0 is one too, since a fence
// interrupts whatever came before. `from` must be such a place (or 0).
export function stableCut(text: string, from: number): number {
  let cut = from;
  let fence = "";
  let prevBlank = false;
  let afterFence = false;
  let pos = from;
  while (pos < text.length) {
    const nl = text.indexOf("\n", pos);
    if (!fence && (prevBlank || afterFence) && pos > from && !/\s/.test(text[pos])) cut = pos;
    if (nl < 0) break; // the last line is still being written
    const line = text.slice(pos, nl);
    afterFence = false;
    if (fence) {
      if (closesFence(line, fence)) {
        fence = "";
        afterFence = true;
      }
      prevBlank = false;
    } else {
      fence = opensFence(line);
      if (fence && pos > from && line[0] !== " ") cut = pos;
      prevBlank = line.trim() === "";
    }
    pos = nl + 1;
  }
  return cut;
}

// openFence reports a tail that is one fenced code block still being
// written: its language and code so far. Such a tail is shown as text,
// without parsing it again for every chunk.
function openFence(tail: string): { opener: string; lang: string; code: string } | null {
  const nl = tail.indexOf("\n");
  if (nl < 0 || tail[0] === " ") return null;
  const first = tail.slice(0, nl);
  const fence = opensFence(first);
  if (!fence) return null;
  let pos = nl + 1;
  while (pos < tail.length) {
    const end = tail.indexOf("\n", pos);
    if (end < 0) break;
    if (closesFence(tail.slice(pos, end), fence)) return null;
    pos = end + 1;
  }
  if (closesFence(tail.slice(pos), fence)) return null;
  const lang = (first.slice(first.indexOf(fence) + fence.length).trim().split(/\s+/)[0] ?? "").replace(/:.*$/, "");
  return { opener: first, lang, code: tail.slice(nl + 1) };
}

export class MarkdownView {
  readonly el: HTMLElement;
  private settled = 0;
  private text = "";
  private tail: HTMLElement;
  // The tail's code element while the tail is an open fence.
  private open?: { opener: string; code: HTMLElement };

  constructor(className: string) {
    this.el = h("div", { class: `markdown ${className}` });
    this.tail = h("div", { class: "md-segment" });
    this.el.append(this.tail);
  }

  set(text: string): void {
    if (text === this.text) return;
    if (!text.startsWith(this.text.slice(0, this.settled))) {
      // Not an append: start over.
      this.settled = 0;
      this.open = undefined;
      this.el.replaceChildren(this.tail);
    }
    this.text = text;
    const cut = stableCut(text, this.settled);
    if (cut > this.settled) {
      const segment = h("div", { class: "md-segment" });
      segment.append(renderMarkdown(text.slice(this.settled, cut)));
      this.el.insertBefore(segment, this.tail);
      this.settled = cut;
      this.open = undefined;
    }
    const tail = text.slice(this.settled);
    const fence = openFence(tail);
    if (!fence) {
      this.open = undefined;
      this.tail.replaceChildren(renderMarkdown(tail));
      return;
    }
    if (this.open?.opener !== fence.opener) {
      const code = h("code", { class: fence.lang ? `language-${fence.lang}` : null });
      const frame = codeFrame(fence.lang, fenceFile(fence.opener.replace(/^ {0,3}(`{3,}|~{3,})/, "")));
      frame.append(h("pre", null, code));
      this.tail.replaceChildren(frame);
      this.open = { opener: fence.opener, code };
    }
    this.open.code.textContent = fence.code;
  }
}
