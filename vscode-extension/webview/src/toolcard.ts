// A tool call's card: kind icon, title, status, the files it touched as
// links, and what it produced — its output, a command's terminal output, or
// for an edit the lines it changed with a button to the diff view.
import type { Location, ToolContent, WebviewMessage } from "../../shared/protocol";
import { basename, button, h } from "./dom";
import { icon, kindIcon, statusIcon } from "./icons";
import { lineChanges } from "./linediff";
import type { ToolCall } from "./transcript";

const statusText = { pending: "pending", in_progress: "running", completed: "done", failed: "failed" } as const;
const outputLimit = 20_000;

type Post = (m: WebviewMessage) => void;

export function locationLabel(loc: Location): string {
  const name = basename(loc.uri);
  const r = loc.range;
  if (!r || (r.start.line === 0 && r.end.line === 0 && r.start.character === 0 && r.end.character === 0)) return name;
  if (r.end.line > r.start.line) return `${name}:${r.start.line + 1}-${r.end.line + 1}`;
  return `${name}:${r.start.line + 1}`;
}

export class ToolCard {
  readonly el: HTMLElement;
  private head: HTMLElement;
  private title: HTMLElement;
  private status: HTMLElement;
  private locations: HTMLElement;
  private body: HTMLElement;
  private input?: HTMLDetailsElement;
  private slots: { item: ToolContent; el: HTMLElement }[] = [];
  private lastHead = "";
  private lastLocations = "";
  private lastInput: unknown;

  constructor(private post: Post) {
    this.title = h("span", { class: "tool-title" });
    this.status = h("span", { class: "tool-status" });
    this.head = h("div", { class: "tool-head" });
    this.locations = h("div", { class: "tool-locations" });
    this.body = h("div", { class: "tool-body" });
    this.el = h("article", { class: "entry tool" }, this.head, this.locations, this.body);
  }

  /**
   * update shows the call; waiting says a permission question about it is
   * open, so the card says the call waits for the user, not that it runs.
   */
  update(call: ToolCall, waiting = false): void {
    // The head changes only with the kind, title or status: rebuilding it
    // for every output update would restart the running icon's animation.
    const asks = waiting && (call.status === "pending" || call.status === "in_progress");
    const head = `${call.kind}\n${call.status}\n${call.title}\n${asks}`;
    if (head !== this.lastHead) {
      this.lastHead = head;
      const status = asks ? "waiting for you" : (statusText[call.status] ?? call.status);
      this.el.className = `entry tool kind-${call.kind} status-${asks ? "waiting" : call.status}`;
      this.el.setAttribute("aria-label", `${call.kind} tool: ${call.title} (${status})`);
      this.title.textContent = call.title;
      this.status.replaceChildren(asks ? icon("warning", "icon status") : statusIcon(call.status), h("span", { class: "status-text" }, status));
      this.head.replaceChildren(kindIcon(call.kind), this.title, this.status);
    }
    this.renderLocations(call.locations ?? []);
    this.renderContent(call);
    this.renderInput(call.rawInput);
  }

  private renderLocations(locs: Location[]): void {
    const key = JSON.stringify(locs);
    if (key === this.lastLocations) return;
    this.lastLocations = key;
    this.locations.replaceChildren(
      ...locs.map((loc) => {
        const b = button(locationLabel(loc), { class: "link location", title: loc.uri }, () =>
          this.post({ type: "openLocation", location: loc }),
        );
        b.prepend(icon("file"));
        return b;
      }),
    );
  }

  private renderContent(call: ToolCall): void {
    const items = call.content ?? [];
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      const slot = this.slots[i];
      if (slot && sameContent(slot.item, item)) continue;
      const el = this.renderItem(item, call);
      if (slot) {
        if (slot.item.type === "terminal" && item.type === "terminal") {
          updateTerminal(slot.el.firstElementChild as HTMLElement, item.output);
          slot.item = item;
          continue;
        }
        slot.el.replaceWith(el);
        this.slots[i] = { item, el };
      } else {
        this.body.append(el);
        this.slots.push({ item, el });
      }
    }
    while (this.slots.length > items.length) this.slots.pop()!.el.remove();
  }

  private renderItem(item: ToolContent, call: ToolCall): HTMLElement {
    switch (item.type) {
      case "terminal": {
        // The box lays out bottom-up (column-reverse), so it shows the
        // newest output without a script reading sizes as it grows.
        const pre = h("pre", { class: "terminal" });
        updateTerminal(pre, item.output);
        return h("div", { class: "terminal-box", tabindex: 0, role: "region", "aria-label": "Terminal output" }, pre);
      }
      case "diff":
        return diffSummary(item, call.title, this.post);
      case "content": {
        const text = item.content?.type === "text" ? item.content.text : "";
        const shown = text.length > outputLimit ? `${text.slice(0, outputLimit)}\n… (${text.length - outputLimit} more characters)` : text;
        return h("pre", { class: "tool-output", tabindex: 0, "aria-label": "Tool output" }, shown);
      }
      default:
        return h("div", { class: "tool-output" }, "(content this version cannot show)");
    }
  }

  private renderInput(raw: unknown): void {
    if (raw === undefined || raw === null || raw === this.lastInput) return;
    this.lastInput = raw;
    const text = typeof raw === "string" ? raw : JSON.stringify(raw, null, 2);
    const pre = h("pre", { class: "tool-input-text" }, text.length > outputLimit ? text.slice(0, outputLimit) + "\n…" : text);
    if (!this.input) {
      this.input = h("details", { class: "tool-input" }, h("summary", null, "Input"), pre);
      this.el.append(this.input);
    } else {
      this.input.replaceChildren(h("summary", null, "Input"), pre);
    }
  }
}

// diffSummary shows what an edit changes — the file, lines added and
// removed — and a button that opens it in VS Code's diff view.
export function diffSummary(item: Extract<ToolContent, { type: "diff" }>, what: string, post: Post): HTMLElement {
  const { added, removed } = lineChanges(item.oldText ?? "", item.newText ?? "");
  const name = basename(item.uri);
  return h(
    "div",
    { class: "diff-summary" },
    icon("diff"),
    h("span", { class: "diff-file", title: item.uri }, name),
    h("span", { class: "added", "aria-label": `${added} lines added` }, `+${added}`),
    h("span", { class: "removed", "aria-label": `${removed} lines removed` }, `−${removed}`),
    button("Open diff", { class: "secondary", "aria-label": `Open diff of ${name}` }, () =>
      post({ type: "openDiff", uri: item.uri, oldText: item.oldText ?? "", newText: item.newText ?? "", title: `${name}: ${what}` }),
    ),
  );
}

function sameContent(a: ToolContent, b: ToolContent): boolean {
  if (a.type !== b.type) return false;
  switch (a.type) {
    case "terminal":
      return a.output === (b as typeof a).output;
    case "diff": {
      const d = b as typeof a;
      return a.uri === d.uri && a.oldText === d.oldText && a.newText === d.newText;
    }
    case "content":
      return a.content?.text === (b as typeof a).content?.text;
    default:
      return false;
  }
}

// updateTerminal shows the end of a command's output, the part that is
// still changing.
function updateTerminal(pre: HTMLElement, output: string): void {
  const shown = output.length > outputLimit ? `… (${output.length - outputLimit} earlier characters)\n${output.slice(-outputLimit)}` : output;
  pre.textContent = shown;
}
