// The prompt box: Enter sends, Shift+Enter starts a new line, ↑/↓ walk the
// history when the caret is on the first/last line, "/" opens completion of
// the workspace's commands, "@" offers files, folders, symbols, the
// selection and the problems to attach (the host searches), and the
// context chips above it can be removed.
import type { CommandInfo, ContextChip, Mention } from "../../shared/protocol";
import { button, h } from "./dom";
import { icon } from "./icons";

const historyLimit = 100;

export type PromptHandlers = {
  // submit sends the text; false keeps it in the box (e.g. a turn runs).
  submit: (text: string) => boolean;
  cancel: () => void;
  removeChip: (chip: ContextChip) => void;
  changed: () => void;
  // hasAttachments lets a prompt of images alone be sent.
  hasAttachments?: () => boolean;
  // mentionQuery asks the host what @query offers (answered through mentions()).
  mentionQuery?: (id: number, query: string) => void;
  // listCommands asks the host for the commands afresh (answered through setCommands).
  listCommands?: () => void;
};

const mentionDelay = 80;

export class PromptBox {
  readonly el: HTMLElement;
  readonly input: HTMLTextAreaElement;
  history: string[] = [];
  private historyIndex = 0; // history.length = the draft
  private draft = "";
  private commands: CommandInfo[] = [];
  private matches: CommandInfo[] = [];
  private mentionItems: Mention[] = [];
  // The @ being typed: where it starts, and the id of its last query.
  private mention?: { start: number; query: string };
  private mentionId = 0;
  private mentionTimer = 0;
  // Whether this "/" at the start has asked the host for the commands.
  private commandsAsked = false;
  private selected = 0;
  private editorChip: ContextChip | null = null;
  private picked: ContextChip[] = [];
  private chipList: HTMLElement;
  private completions: HTMLUListElement;
  private sendButton: HTMLButtonElement;
  private cancelButton: HTMLButtonElement;
  private hint: HTMLElement;

  constructor(private handlers: PromptHandlers) {
    this.chipList = h("div", { class: "chips", role: "list", "aria-label": "Context sent with the prompt" });
    this.completions = h("ul", { class: "completions", id: "command-completions", role: "listbox", "aria-label": "Commands", hidden: true });
    this.input = h("textarea", {
      class: "prompt-input",
      rows: 1,
      role: "combobox",
      "aria-label": "Message darman",
      "aria-autocomplete": "list",
      "aria-controls": this.completions.id,
      "aria-expanded": "false",
      "aria-describedby": "prompt-hint",
      placeholder: "Ask darman — / for commands, @ to attach",
    });
    this.sendButton = button("Send", { class: "icon-button send" }, () => this.submit(), icon("send"));
    this.cancelButton = button("Cancel", { class: "icon-button cancel", hidden: true }, () => this.handlers.cancel(), icon("stop"));
    this.hint = h("div", { class: "prompt-hint", id: "prompt-hint" }, "Enter to send · Shift+Enter for a new line · ↑ for history");
    this.el = h(
      "div",
      { class: "prompt" },
      this.chipList,
      this.completions,
      h("div", { class: "prompt-row" }, this.input, this.sendButton, this.cancelButton),
      this.hint,
    );
    this.input.addEventListener("keydown", (ev) => this.onKey(ev));
    this.input.addEventListener("input", () => {
      this.historyIndex = this.history.length;
      this.autosize();
      this.complete();
      this.handlers.changed();
    });
    this.completions.addEventListener("mousedown", (ev) => {
      const li = (ev.target as Element).closest("li[data-index]");
      if (!li) return;
      ev.preventDefault();
      this.accept(Number(li.getAttribute("data-index")));
    });
  }

  setHistory(history: string[]): void {
    this.history = history.slice(-historyLimit);
    this.historyIndex = this.history.length;
  }

  get text(): string {
    return this.input.value;
  }

  setText(text: string): void {
    this.input.value = text;
    this.input.setSelectionRange(text.length, text.length);
    this.autosize();
    this.complete();
  }

  setCommands(commands: CommandInfo[]): void {
    this.commands = Array.isArray(commands) ? commands.filter((c) => c && typeof c.name === "string") : [];
    this.complete();
  }

  /** The chips the prompt carries: the editor's first, then those picked after @. */
  getChips(): ContextChip[] {
    return this.editorChip ? [this.editorChip, ...this.picked] : this.picked.slice();
  }

  /** setChips restores chips (a saved state): those with a kind were picked. */
  setChips(chips: ContextChip[]): void {
    const ok = chips.filter((c) => c && typeof c.uri === "string");
    this.editorChip = ok.find((c) => !c.kind) ?? null;
    this.picked = ok.filter((c) => c.kind);
    this.renderChips();
  }

  /** setEditorChip follows the editor's file or selection; picked chips stay. */
  setEditorChip(chip: ContextChip | null): void {
    this.editorChip = chip && typeof chip.uri === "string" ? chip : null;
    this.renderChips();
  }

  /** clearPicked drops the chips picked after @ (they went with a prompt). */
  clearPicked(): void {
    if (this.picked.length === 0) return;
    this.picked = [];
    this.renderChips();
  }

  private renderChips(): void {
    const chips = this.getChips();
    this.chipList.replaceChildren(
      ...chips.map((chip) =>
        h(
          "span",
          { class: chip.kind ? `chip picked kind-${chip.kind}` : "chip", role: "listitem", title: chip.kind === "problems" ? "the workspace's errors and warnings" : chip.kind === "terminal" ? "the last terminal command and its output" : chip.uri },
          icon(chip.kind === "symbol" ? "search" : chip.kind === "problems" ? "warning" : chip.kind === "terminal" ? "execute" : "file"),
          h("span", { class: "chip-label" }, chip.kind ? `@${chip.label}` : chip.label || chip.uri),
          button(`Remove ${chip.label || chip.uri} from the context`, { class: "chip-remove" }, () => this.removeChip(chip), icon("close")),
        ),
      ),
    );
    this.chipList.hidden = chips.length === 0;
  }

  /** mentions are the host's answer to a mentionQuery; a stale one is dropped. */
  mentions(id: number, items: Mention[]): void {
    if (id !== this.mentionId || !this.mention) return;
    this.mentionItems = Array.isArray(items) ? items.filter((m) => m && typeof m.label === "string" && typeof m.uri === "string") : [];
    if (this.mentionItems.length === 0) {
      this.closeCompletions();
      return;
    }
    this.completions.setAttribute("aria-label", "Attach");
    this.completions.replaceChildren(
      ...this.mentionItems.map((m, i) =>
        h(
          "li",
          { role: "option", id: `command-option-${i}`, "data-index": i, "aria-selected": "false", class: `mention kind-${m.kind}` },
          h("span", { class: "command-name" }, `@${m.label}`),
          h("span", { class: "command-hint" }, ` ${m.kind}`),
          m.detail ? h("span", { class: "command-description" }, m.detail) : null,
        ),
      ),
    );
    this.completions.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
    this.select(0);
  }

  setRunning(running: boolean, note?: string): void {
    this.sendButton.hidden = running;
    this.cancelButton.hidden = !running;
    this.hint.textContent = note ?? (running ? "darman is working — Enter queues a follow-up · Esc stops it" : "Enter to send · Shift+Enter for a new line · ↑ for history");
  }

  focus(): void {
    this.input.focus();
  }

  submit(): void {
    const text = this.input.value.trim();
    if (!text && !this.handlers.hasAttachments?.()) return;
    if (!this.handlers.submit(text)) return;
    if (text && this.history[this.history.length - 1] !== text) this.history.push(text);
    if (this.history.length > historyLimit) this.history.splice(0, this.history.length - historyLimit);
    this.historyIndex = this.history.length;
    this.draft = "";
    this.setText("");
    this.handlers.changed();
  }

  private removeChip(chip: ContextChip): void {
    if (chip === this.editorChip) {
      this.editorChip = null;
      this.handlers.removeChip(chip);
    } else {
      this.picked = this.picked.filter((c) => c !== chip);
      this.handlers.changed();
    }
    this.renderChips();
    this.input.focus();
  }

  private onKey(ev: KeyboardEvent): void {
    if (ev.isComposing) return;
    const open = !this.completions.hidden;
    if (open) {
      if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
        ev.preventDefault();
        const n = this.mention ? this.mentionItems.length : this.matches.length;
        this.select((this.selected + (ev.key === "ArrowDown" ? 1 : n - 1)) % n);
        return;
      }
      if (ev.key === "Tab" || (ev.key === "Enter" && !ev.shiftKey)) {
        ev.preventDefault();
        this.accept(this.selected);
        return;
      }
      if (ev.key === "Escape") {
        ev.preventDefault();
        if (this.mention) {
          this.mention = undefined;
          this.mentionId++;
        }
        this.closeCompletions();
        return;
      }
    }
    if (ev.key === "Enter" && !ev.shiftKey && !ev.altKey && !ev.ctrlKey && !ev.metaKey) {
      ev.preventDefault();
      this.submit();
      return;
    }
    const value = this.input.value;
    const caret = this.input.selectionStart;
    const collapsed = caret === this.input.selectionEnd;
    if (ev.key === "ArrowUp" && collapsed && !value.slice(0, caret).includes("\n") && this.historyIndex > 0) {
      ev.preventDefault();
      if (this.historyIndex === this.history.length) this.draft = value;
      this.historyIndex--;
      this.showHistory(this.history[this.historyIndex]);
    } else if (ev.key === "ArrowDown" && collapsed && !value.slice(caret).includes("\n") && this.historyIndex < this.history.length) {
      ev.preventDefault();
      this.historyIndex++;
      this.showHistory(this.historyIndex === this.history.length ? this.draft : this.history[this.historyIndex]);
    }
  }

  private showHistory(text: string): void {
    this.input.value = text;
    this.input.setSelectionRange(text.length, text.length);
    this.autosize();
    this.closeCompletions();
  }

  private autosize(): void {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight, 240)}px`;
  }

  // complete opens the command list while the box holds "/" and a name,
  // and asks the host what to attach while the caret ends an "@" word.
  private complete(): void {
    const before = this.input.value.slice(0, this.input.selectionStart ?? this.input.value.length);
    const at = /(?:^|\s)@([^\s@]*)$/.exec(before);
    if (at && this.handlers.mentionQuery) {
      this.mention = { start: before.length - at[1].length - 1, query: at[1] };
      const id = ++this.mentionId;
      clearTimeout(this.mentionTimer);
      this.mentionTimer = window.setTimeout(() => this.handlers.mentionQuery?.(id, at[1]), mentionDelay);
      return;
    }
    if (this.mention) {
      this.mention = undefined;
      this.mentionId++;
      this.closeCompletions();
    }
    const m = /^\/([^\s/]*)$/.exec(this.input.value);
    // A command file written since the list came is offered: each "/"
    // typed at the start asks the host again; the old list shows meanwhile.
    if (m && !this.commandsAsked) {
      this.commandsAsked = true;
      this.handlers.listCommands?.();
    } else if (!m) {
      this.commandsAsked = false;
    }
    if (!m || this.commands.length === 0) {
      this.closeCompletions();
      return;
    }
    const q = m[1].toLowerCase();
    const starts = this.commands.filter((c) => c.name.toLowerCase().startsWith(q));
    const contains = this.commands.filter((c) => !c.name.toLowerCase().startsWith(q) && c.name.toLowerCase().includes(q));
    this.matches = [...starts, ...contains];
    this.completions.setAttribute("aria-label", "Commands");
    if (this.matches.length === 0 || (this.matches.length === 1 && this.matches[0].name === m[1])) {
      this.closeCompletions();
      return;
    }
    this.completions.replaceChildren(
      ...this.matches.map((c, i) =>
        h(
          "li",
          { role: "option", id: `command-option-${i}`, "data-index": i, "aria-selected": "false" },
          h("span", { class: "command-name" }, `/${c.name}`),
          c.argumentHint ? h("span", { class: "command-hint" }, ` ${c.argumentHint}`) : null,
          c.description ? h("span", { class: "command-description" }, c.description) : null,
        ),
      ),
    );
    this.completions.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
    this.select(0);
  }

  private select(i: number): void {
    this.selected = i;
    const items = this.completions.children;
    for (let j = 0; j < items.length; j++) items[j].setAttribute("aria-selected", String(j === i));
    this.input.setAttribute("aria-activedescendant", `command-option-${i}`);
    items[i]?.scrollIntoView({ block: "nearest" });
  }

  private accept(i: number): void {
    if (this.mention) {
      const m = this.mentionItems[i];
      const at = this.mention;
      if (!m) return;
      // The "@query" typed goes; the pick is a chip.
      const caret = at.start + 1 + at.query.length;
      const v = this.input.value;
      this.input.value = v.slice(0, at.start) + v.slice(caret).replace(/^ /, "");
      this.input.setSelectionRange(at.start, at.start);
      this.mention = undefined;
      this.mentionId++;
      this.closeCompletions();
      if (!this.picked.some((c) => c.uri === m.uri && c.kind === m.kind && JSON.stringify(c.range) === JSON.stringify(m.range))) {
        this.picked.push({ uri: m.uri, label: m.kind === "selection" ? `selection ${m.detail ?? ""}`.trim() : m.label, kind: m.kind, ...(m.range ? { range: m.range } : {}) });
      }
      this.renderChips();
      this.autosize();
      this.input.focus();
      this.handlers.changed();
      return;
    }
    const c = this.matches[i];
    if (!c) return;
    this.closeCompletions();
    this.input.value = `/${c.name} `;
    this.input.setSelectionRange(this.input.value.length, this.input.value.length);
    this.input.focus();
    this.handlers.changed();
  }

  private closeCompletions(): void {
    if (this.completions.hidden) return;
    this.completions.hidden = true;
    this.completions.replaceChildren();
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }
}
