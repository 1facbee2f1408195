// The stream: the transcript's entries as DOM, updated in place. apply()
// takes a batch of updates (app.ts gathers one per animation frame), folds
// them into the transcript, then renders each entry the batch touched once.
import type { SessionUpdate, WebviewMessage } from "../../shared/protocol";
import { button, formatCount, h } from "./dom";
import { icon } from "./icons";
import { codeOf, MarkdownView } from "./markdown";
import { ToolCard } from "./toolcard";
import type { Pictures } from "./images";
import { Transcript, type Entry, type Saved, type Usage } from "./transcript";

type Post = (m: WebviewMessage) => void;

interface View {
  el: HTMLElement;
  update(entry: Entry): void;
}

export type StreamActions = {
  post: Post;
  retry: (text: string) => void;
  // edit puts a message's text back in the prompt box, to change and send.
  edit?: (text: string) => void;
  pictures?: Pictures; // draws the user's images; without it they show as labels
};

export class Stream {
  readonly el: HTMLElement;
  transcript = new Transcript();
  private views = new Map<number, View>();
  private lastThought?: ThoughtView;
  // The tool calls an open permission question is about.
  private waiting = new Set<string>();

  constructor(private actions: StreamActions) {
    this.el = h("div", { class: "stream", role: "log", "aria-label": "Conversation" });
    this.el.addEventListener("click", (ev) => this.onClick(ev));
  }

  // reset replaces everything shown: a loaded session, a restored state, or
  // an empty stream.
  reset(saved?: Saved, updates?: SessionUpdate[]): void {
    this.transcript = new Transcript(saved);
    this.views.clear();
    this.lastThought = undefined;
    this.el.replaceChildren();
    for (const e of this.transcript.entries) this.render(e);
    if (updates?.length) this.apply(updates);
    this.markBusy();
  }

  apply(updates: SessionUpdate[]): void {
    const dirty = new Set<Entry>();
    for (const u of updates) {
      // One malformed update must not take the rest of the batch with it.
      try {
        const e = this.transcript.apply(u);
        if (e) dirty.add(e);
      } catch (err) {
        console.warn("darman: dropped an update it could not read", u, err);
      }
    }
    for (const e of dirty) {
      try {
        this.render(e);
      } catch (err) {
        console.warn("darman: could not show an entry", e, err);
      }
    }
    if (this.lastThought && (!this.transcript.running || this.lastThought !== this.views.get(this.lastEntryId()))) {
      this.lastThought.done();
      this.lastThought = undefined;
    }
    this.markBusy();
  }

  /** setWaiting marks the tool cards whose calls wait for a permission answer. */
  setWaiting(toolCallIds: Iterable<string>): void {
    const next = new Set(toolCallIds);
    const changed = [...next, ...this.waiting].filter((id) => next.has(id) !== this.waiting.has(id));
    this.waiting = next;
    for (const id of changed) {
      const e = this.transcript.tool(id);
      if (e) this.render(e);
    }
  }

  private lastEntryId(): number {
    const es = this.transcript.entries;
    return es.length ? es[es.length - 1].id : -1;
  }

  private markBusy(): void {
    this.el.setAttribute("aria-busy", String(this.transcript.running));
  }

  private render(e: Entry): void {
    let view = this.views.get(e.id);
    if (!view) {
      view = this.create(e);
      this.views.set(e.id, view);
      this.el.append(view.el);
    }
    view.update(e);
    if (view instanceof ThoughtView) {
      // "Thinking…" only while the turn runs and nothing came after it.
      if (this.transcript.running) this.lastThought = view;
      else view.done();
    }
  }

  private create(e: Entry): View {
    switch (e.kind) {
      case "user":
        return new UserView(this.actions);
      case "agent":
        return new AgentView(this.actions.post);
      case "thought":
        return new ThoughtView();
      case "tool": {
        const card = new ToolCard(this.actions.post);
        return { el: card.el, update: (x) => x.kind === "tool" && card.update(x.call, this.waiting.has(x.call.toolCallId)) };
      }
      case "plan":
        return new PlanView();
      case "usage":
        return new UsageView();
      case "notice":
      case "failed":
      case "cancelled":
        return new NoticeView(() => {
          const text = this.transcript.lastUserText();
          if (text) this.actions.retry(text);
        }, this.actions.post);
    }
  }

  private onClick(ev: MouseEvent): void {
    const target = ev.target as Element | null;
    const b = target?.closest?.("button[data-action]");
    if (!b || !this.el.contains(b)) return;
    const code = codeOf(b);
    if (code === null) return;
    if (b.getAttribute("data-action") === "copy") {
      this.actions.post({ type: "copy", text: code });
      b.classList.add("done");
      b.setAttribute("aria-label", "Copied");
      window.setTimeout(() => {
        b.classList.remove("done");
        b.setAttribute("aria-label", "Copy code");
      }, 1500);
    } else if (b.getAttribute("data-action") === "insert") {
      this.actions.post({ type: "insertAtCursor", text: code });
    } else if (b.getAttribute("data-action") === "apply") {
      const file = b.closest(".code-block")?.getAttribute("data-file");
      this.actions.post({ type: "applyToFile", text: code, ...(file ? { file } : {}) });
    } else if (b.getAttribute("data-action") === "terminal") {
      this.actions.post({ type: "runInTerminal", text: shellCommands(code) });
    }
  }
}

// shellCommands is what a shell block asks to run: a transcript's "$ "
// prompts taken off, its output lines (those without one) left out.
export function shellCommands(code: string): string {
  const lines = code.split("\n");
  const prompted = lines.filter((l) => /^\s*[$>] /.test(l));
  if (prompted.length === 0) return code;
  return prompted.map((l) => l.replace(/^\s*[$>] /, "")).join("\n");
}

class UserView implements View {
  private text = h("div", { class: "user-text" });
  private images?: HTMLElement;
  private shown = 0;
  private pictures?: Pictures;
  private value = "";
  el: HTMLElement;
  constructor(actions: StreamActions) {
    this.pictures = actions.pictures;
    const tools = h(
      "span",
      { class: "message-actions" },
      button("Ask again", { class: "icon-button" }, () => actions.retry(this.value), icon("history")),
      actions.edit ? button("Edit this message", { class: "icon-button" }, () => actions.edit?.(this.value), icon("rename")) : null,
      button("Copy the message", { class: "icon-button" }, () => actions.post({ type: "copy", text: this.value }), icon("copy")),
    );
    this.el = h("article", { class: "entry user", "aria-label": "You" }, h("div", { class: "who" }, "You", tools), this.text);
  }
  update(e: Entry): void {
    if (e.kind !== "user") return;
    this.value = e.text;
    this.text.textContent = e.text;
    const refs = e.images ?? [];
    if (refs.length === this.shown) return;
    this.shown = refs.length;
    const strip = this.pictures
      ? this.pictures.strip(refs)
      : h("div", { class: "message-images" }, ...refs.map((r) => h("span", { class: "message-image unavailable" }, r.title ?? r.label)));
    if (this.images) this.images.replaceWith(strip);
    else this.el.append(strip);
    this.images = strip;
  }
}

class AgentView implements View {
  private md = new MarkdownView("agent-text");
  private value = "";
  el: HTMLElement;
  constructor(post: Post) {
    const copy = button("Copy the answer", { class: "icon-button message-copy" }, () => post({ type: "copy", text: this.value }), icon("copy"));
    this.el = h("article", { class: "entry agent", "aria-label": "darman" }, this.md.el, h("div", { class: "message-actions" }, copy));
  }
  update(e: Entry): void {
    if (e.kind !== "agent") return;
    this.value = e.text;
    this.md.set(e.text);
  }
}

class ThoughtView implements View {
  private md = new MarkdownView("thought-text");
  private label = h("span", { class: "thought-label" }, "Thinking…");
  el = h("details", { class: "entry thought" }, h("summary", null, icon("think"), this.label), this.md.el);
  update(e: Entry): void {
    if (e.kind === "thought") this.md.set(e.text);
  }
  done(): void {
    this.label.textContent = "Thought";
  }
}

const planStatus = { pending: "to do", in_progress: "in progress", completed: "done" } as const;

class PlanView implements View {
  private list = h("ul", { class: "plan-list" });
  private count = h("span", { class: "plan-count" });
  el = h("section", { class: "entry plan", "aria-label": "Plan" }, h("div", { class: "plan-head" }, h("span", null, "Plan"), this.count), this.list);
  update(e: Entry): void {
    if (e.kind !== "plan") return;
    const done = e.entries.filter((p) => p.status === "completed").length;
    this.count.textContent = `${done}/${e.entries.length} done`;
    this.list.replaceChildren(
      ...e.entries.map((p) =>
        h(
          "li",
          { class: `plan-item status-${p.status}` },
          icon(`plan_${p.status}`),
          h("span", { class: "plan-text" }, p.content),
          h("span", { class: "visually-hidden" }, ` (${planStatus[p.status] ?? p.status})`),
        ),
      ),
    );
  }
}

export function usageText(u: Usage): string {
  const parts = [`${formatCount(u.inputTokens)} in`, `${formatCount(u.outputTokens)} out`];
  const cached = u.cacheReadTokens + u.cacheWriteTokens;
  if (cached) parts.push(`${formatCount(u.cacheReadTokens)} cache read`);
  if (u.cost) parts.push(`$${u.cost.toFixed(u.cost < 0.01 ? 4 : u.cost < 1 ? 3 : 2)}`);
  if (u.contextUsed !== undefined) {
    parts.push(
      u.contextWindow
        ? `context ${Math.round((100 * u.contextUsed) / u.contextWindow)}% of ${formatCount(u.contextWindow)}`
        : `context ${formatCount(u.contextUsed)}`,
    );
  }
  return parts.join(" · ");
}

class UsageView implements View {
  el = h("div", { class: "entry usage", "aria-label": "Usage this turn" });
  update(e: Entry): void {
    if (e.kind === "usage") {
      this.el.textContent = usageText(e.usage);
      this.el.title = `${e.usage.calls} model call${e.usage.calls === 1 ? "" : "s"} this turn`;
    }
  }
}

class NoticeView implements View {
  el = h("div", { class: "entry notice" });
  constructor(
    private retry: () => void,
    private post: Post,
  ) {}
  update(e: Entry): void {
    if (e.kind === "notice") {
      this.el.className = `entry notice level-${e.level}`;
      this.el.setAttribute("role", e.level === "error" ? "alert" : "status");
      this.el.replaceChildren(icon(e.level), h("span", null, e.message));
    } else if (e.kind === "failed") {
      this.el.className = "entry notice level-error failed";
      this.el.setAttribute("role", "alert");
      this.el.replaceChildren(
        icon("error"),
        h(
          "div",
          { class: "failed-body" },
          h("div", { class: "failed-message" }, `The turn failed: ${e.message}`),
          h(
            "div",
            { class: "failed-help" },
            "The cause is in darman's log. If the model or its key is wrong, fix it in the settings; otherwise send the prompt again.",
          ),
          h(
            "div",
            { class: "failed-actions" },
            button("Retry", { class: "secondary retry" }, () => this.retry()),
            button("Show log", { class: "secondary" }, () => this.post({ type: "runCommand", command: "darman.showOutput" })),
            button("Open settings", { class: "secondary" }, () => this.post({ type: "runCommand", command: "workbench.action.openSettings" })),
          ),
        ),
      );
    } else if (e.kind === "cancelled") {
      this.el.className = "entry notice level-info cancelled";
      this.el.setAttribute("role", "status");
      this.el.replaceChildren(icon("stop"), h("span", null, "Turn cancelled."));
    }
  }
}
