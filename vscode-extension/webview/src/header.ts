// The bar above the stream: the current session (a button that opens the
// session list: switch, rename, delete), the agent and model pickers, the
// plan hand-off button and "new session".
import type { AgentInfo, ModelInfo, SessionSummary, WebviewMessage } from "../../shared/protocol";
import { button, h } from "./dom";
import { icon } from "./icons";

type Post = (m: WebviewMessage) => void;

export type HeaderHandlers = {
  post: Post;
  newSession: () => void;
  modelChanged: (model: string) => void;
  /** The user asked build to carry out the plan agent's last answer. */
  handoff: () => void;
};

export class Header {
  readonly el: HTMLElement;
  readonly panel: HTMLElement;
  private toggle: HTMLButtonElement;
  private title: HTMLElement;
  private picker: HTMLSelectElement;
  private agentPicker: HTMLSelectElement;
  private handoffButton: HTMLButtonElement;
  private list: HTMLUListElement;
  private search: HTMLInputElement;
  private sessions: SessionSummary[] = [];
  // Older sessions follow the listed ones; asked for: the row to focus when they come.
  private more = false;
  private asked: number | undefined;
  private current?: string;

  constructor(private handlers: HeaderHandlers) {
    this.title = h("span", { class: "session-title" }, "New session");
    this.toggle = button("Sessions", { class: "session-toggle", "aria-expanded": "false", "aria-controls": "session-panel" }, () => this.setOpen(this.panel.hidden), icon("history"), this.title);
    this.toggle.setAttribute("aria-label", "Sessions: New session");
    this.picker = h("select", { class: "model-picker", "aria-label": "Model", title: "Model for the next turn" });
    this.picker.addEventListener("change", () => {
      handlers.post({ type: "setModel", model: this.picker.value });
      handlers.modelChanged(this.picker.value);
    });
    this.agentPicker = h("select", { class: "agent-picker", "aria-label": "Agent", title: "Agent for the next turn", hidden: true });
    this.agentPicker.addEventListener("change", () => this.showHandoff());
    this.handoffButton = button("Build it", { class: "handoff", hidden: true, title: "Carry out the plan with the build agent" }, () => this.handlers.handoff());
    this.el = h(
      "header",
      { class: "bar" },
      this.toggle,
      this.agentPicker,
      this.handoffButton,
      this.picker,
      button("New session", { class: "icon-button" }, () => {
        this.setOpen(false);
        this.handlers.newSession();
      }, icon("add")),
    );
    this.list = h("ul", { class: "session-list", "aria-label": "Sessions" });
    this.search = h("input", { class: "session-search", type: "search", placeholder: "Search sessions", "aria-label": "Search sessions", "aria-controls": "session-panel" });
    this.search.addEventListener("input", () => this.render());
    this.search.addEventListener("keydown", (ev) => {
      if (ev.key === "ArrowDown") {
        ev.preventDefault();
        this.list.querySelector<HTMLElement>(".session-open")?.focus();
      } else if (ev.key === "Enter") {
        ev.preventDefault();
        this.list.querySelector<HTMLElement>(".session-open")?.click();
      }
    });
    this.panel = h("div", { class: "sessions", id: "session-panel", hidden: true }, h("div", { class: "session-search-row" }, this.search), this.list);
    this.panel.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape" && !(ev.target as Element).matches(".session-rename")) {
        ev.preventDefault();
        this.setOpen(false);
        this.toggle.focus();
      }
    });
  }

  /** closeList closes an open session list (Escape elsewhere in the panel); false when it was closed. */
  closeList(): boolean {
    if (this.panel.hidden) return false;
    this.setOpen(false);
    this.toggle.focus();
    return true;
  }

  setOpen(open: boolean): void {
    this.panel.hidden = !open;
    this.toggle.setAttribute("aria-expanded", String(open));
    if (open) {
      this.handlers.post({ type: "listSessions" });
      this.search.value = "";
      this.render();
      // With many sessions the search comes first; with a few, the list.
      if (this.sessions.length > 8) this.search.focus();
      else this.list.querySelector<HTMLElement>(".session-open")?.focus();
    }
  }

  setTitle(title: string): void {
    const t = title || "New session";
    this.title.textContent = t;
    this.toggle.setAttribute("aria-label", `Sessions: ${t}`);
  }

  /** The sessions listed, newest first; more: older ones follow, a button away. */
  setSessions(sessions: SessionSummary[], current?: string, more = false): void {
    this.sessions = Array.isArray(sessions) ? sessions.filter((s) => s && typeof s.sessionId === "string") : [];
    this.more = more;
    if (current !== undefined) this.current = current;
    const cur = this.sessions.find((s) => s.sessionId === this.current);
    if (cur) this.setTitle(cur.title);
    this.render();
    if (this.asked !== undefined && !this.panel.hidden) {
      // Focus the first of the older sessions, where the button was.
      const rows = this.list.querySelectorAll<HTMLElement>(".session-open, .session-more");
      (rows[Math.min(this.asked, rows.length - 1)] ?? this.search).focus();
    }
    this.asked = undefined;
  }

  setCurrent(sessionId: string | undefined): void {
    this.current = sessionId;
    this.showHandoff();
    this.render();
  }

  setModels(models: ModelInfo[], model: string): void {
    const list = Array.isArray(models) ? models.filter((m) => m && typeof m.id === "string") : [];
    if (model && !list.some((m) => m.id === model)) list.unshift({ id: model });
    this.picker.replaceChildren(...list.map((m) => h("option", { value: m.id }, m.name || m.id)));
    this.picker.value = model;
    this.picker.disabled = list.length === 0;
  }

  get model(): string {
    return this.picker.value;
  }

  /** The agents a session runs; the picker is shown once there is a choice. */
  setAgents(agents: AgentInfo[] | undefined, current?: string): void {
    const list = Array.isArray(agents) ? agents.filter((a) => a && typeof a.name === "string") : [];
    const keep = current ?? this.agentPicker.value;
    this.agentPicker.replaceChildren(...list.map((a) => h("option", { value: a.name, title: a.description ?? "" }, a.name)));
    this.agentPicker.value = list.some((a) => a.name === keep) ? keep : (list[0]?.name ?? "");
    this.agentPicker.hidden = list.length < 2;
    this.showHandoff();
  }

  /** The agent for the next turn; "" when darman named none. */
  get agent(): string {
    return this.agentPicker.value;
  }

  set agent(name: string) {
    if ([...this.agentPicker.options].some((o) => o.value === name)) this.agentPicker.value = name;
    this.showHandoff();
  }

  /** The hand-off button shows while plan is picked and a session holds its answer. */
  private showHandoff(): void {
    this.handoffButton.hidden = this.agentPicker.value !== "plan" || !this.current;
  }

  private render(): void {
    if (this.panel.hidden) return;
    if (this.sessions.length === 0) {
      this.list.replaceChildren(h("li", { class: "session-empty" }, "No saved sessions in this workspace yet."));
      return;
    }
    const q = this.search.value.trim().toLowerCase();
    const shown = q ? this.sessions.filter((s) => `${s.title || "Untitled session"} ${s.model}`.toLowerCase().includes(q)) : this.sessions;
    if (shown.length === 0) {
      const older = this.more ? " among these; older sessions are not listed yet" : "";
      this.list.replaceChildren(h("li", { class: "session-empty", role: "status" }, `No session matches “${this.search.value.trim()}”${older}.`));
    } else {
      this.list.replaceChildren(...shown.map((s) => this.row(s)));
    }
    if (this.more) {
      const more = button("Show older sessions", { class: "session-more" }, () => {
        this.asked = this.list.querySelectorAll(".session-open").length;
        more.disabled = true;
        this.handlers.post({ type: "moreSessions" });
      });
      this.list.append(h("li", { class: "session-more-row" }, more));
    }
  }

  private row(s: SessionSummary): HTMLElement {
    const current = s.sessionId === this.current;
    const label = s.title || "Untitled session";
    const when = formatWhen(s.updatedAt);
    const open = button(
      `Open ${label}`,
      { class: "session-open", "aria-current": current ? "true" : undefined },
      () => {
        this.handlers.post({ type: "loadSession", sessionId: s.sessionId });
        this.setOpen(false);
        this.toggle.focus();
      },
      h("span", { class: "session-name" }, label),
      h("span", { class: "session-meta" }, [when, s.model, s.state === "running" ? "running" : ""].filter(Boolean).join(" · ")),
    );
    const li = h("li", { class: current ? "session current" : "session", "data-session": s.sessionId });
    const rename = button(`Rename ${label}`, { class: "icon-button" }, () => this.rename(li, s), icon("rename"));
    let armed = false;
    const del = button(`Delete ${label}`, { class: "icon-button delete" }, () => {
      if (!armed) {
        armed = true;
        del.classList.add("armed");
        del.setAttribute("aria-label", `Confirm: delete ${label} for good`);
        del.title = "Click again to delete";
        return;
      }
      this.handlers.post({ type: "deleteSession", sessionId: s.sessionId });
      this.sessions = this.sessions.filter((x) => x.sessionId !== s.sessionId);
      this.render();
      this.list.querySelector<HTMLElement>(".session-open")?.focus();
    }, icon("close"));
    del.addEventListener("blur", () => {
      armed = false;
      del.classList.remove("armed");
      del.setAttribute("aria-label", `Delete ${label}`);
      del.title = `Delete ${label}`;
    });
    li.append(open, rename, del);
    return li;
  }

  private rename(li: HTMLElement, s: SessionSummary): void {
    const input = h("input", { class: "session-rename", type: "text", value: s.title, "aria-label": "New session title" });
    let done = false;
    const finish = (commit: boolean) => {
      if (done) return;
      done = true;
      const title = input.value.trim();
      if (commit && title && title !== s.title) {
        this.handlers.post({ type: "renameSession", sessionId: s.sessionId, title });
        s.title = title;
        if (s.sessionId === this.current) this.setTitle(title);
      }
      this.render();
      this.list.querySelector<HTMLElement>(`li[data-session="${CSS.escape(s.sessionId)}"] .session-open`)?.focus();
    };
    input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") {
        ev.preventDefault();
        finish(true);
      } else if (ev.key === "Escape") {
        ev.preventDefault();
        ev.stopPropagation();
        finish(false);
      }
    });
    input.addEventListener("blur", () => finish(true));
    li.replaceChildren(input);
    input.focus();
    input.select();
  }
}

function formatWhen(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "";
  const d = new Date(t);
  const now = new Date();
  if (d.toDateString() === now.toDateString()) return d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  return d.toLocaleDateString(undefined, { month: "short", day: "numeric" });
}
