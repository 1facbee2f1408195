// The chat panel: wires the header, the stream, the permission cards and
// the prompt box to the host. Host messages are queued and handled once per
// animation frame, in order, so a burst of updates costs one render; what
// should survive the view being hidden is saved with setState, at most a few
// times a second. Open permission questions are not saved: the host asks
// them again when the view comes back (webviewReady), and a saved one may
// have been answered or cancelled meanwhile.
import type { ContextChip, HostMessage, SessionSummary, SessionUpdate, WebviewMessage, CommandInfo, ModelInfo, PromptImage, TurnStart } from "../../shared/protocol";
import type { VsCodeApi } from "./api";
import { button, h } from "./dom";
import { Header } from "./header";
import { ImageTray, Pictures } from "./images";
import { icon } from "./icons";
import { Permissions } from "./permission";
import { PromptBox } from "./prompt";
import { Reverts } from "./revert";
import { Stream } from "./stream";
import type { Saved } from "./transcript";

const stateVersion = 1;

// The tool kinds whose calls may change files (what darman checkpoints before).
const changingKinds = new Set(["edit", "delete", "move", "execute"]);

type State = {
  v: number;
  sessionId?: string;
  title: string;
  transcript: Saved;
  models: ModelInfo[];
  model: string;
  commands: CommandInfo[];
  sessions: SessionSummary[];
  draft: string;
  history: string[];
  chips: ContextChip[];
  queued?: Queued[];
};

// A follow-up typed while a turn runs: sent when the turn ends.
type Queued = { text: string; context: ContextChip[] };

// Saving serializes the state: often when idle (the draft), less while a
// turn streams.
const saveDelay = 300;
const saveDelayRunning = 1000;
const hiddenFlushDelay = 250;

export class App {
  private header: Header;
  private stream: Stream;
  private permissions: Permissions;
  private prompt: PromptBox;
  private reverts: Reverts;
  // The live turns that ran a tool that may change files, by turnId.
  private changing = new Set<string>();
  private images: ImageTray;
  private pictures: Pictures;
  // The images of the prompt just sent, until darman takes it (its user
  // message comes, with the images as darman stored them), to give back
  // to the tray if darman refuses it.
  private sentImages?: PromptImage[];
  private scroller: HTMLElement;
  private toEnd: HTMLButtonElement;
  private status: HTMLElement;
  private banner: HTMLElement;
  private sessionId?: string;
  private title = "";
  private models: ModelInfo[] = [];
  private model = "";
  private commands: CommandInfo[] = [];
  private sessions: SessionSummary[] = [];
  private pending = false;
  private queued: Queued[] = [];
  private queueEl: HTMLElement;
  private statusLabel: string | undefined;
  private stick = true;
  private autoTop = 0; // the scroll position last set to follow the stream
  private queue: HostMessage[] = [];
  private frame = 0;
  private timer = 0;
  private saveTimer = 0;
  private batches = 0;
  private saves = 0;

  constructor(
    private root: HTMLElement,
    private api: VsCodeApi,
  ) {
    const post = (m: WebviewMessage) => this.post(m);
    this.header = new Header({ post, newSession: () => this.newSession(), modelChanged: (m) => ((this.model = m), this.save()), handoff: () => this.handoff() });
    this.pictures = new Pictures(post);
    this.stream = new Stream({
      post,
      retry: (text) => this.send(text),
      edit: (text) => {
        this.prompt.setText(text);
        this.prompt.focus();
      },
      pictures: this.pictures,
    });
    this.reverts = new Reverts(post);
    this.permissions = new Permissions(post, () => this.questionsChanged(), () => this.prompt.focus());
    this.prompt = new PromptBox({
      submit: (text) => this.submit(text),
      cancel: () => this.cancel(),
      removeChip: (chip) => {
        this.post({ type: "removeContext", uri: chip.uri });
        this.save();
      },
      changed: () => this.save(),
      hasAttachments: () => this.images.count > 0,
      mentionQuery: (id, query) => this.post({ type: "mentionQuery", id, query }),
      listCommands: () => this.post({ type: "listCommands" }),
    });
    this.images = new ImageTray(
      () => this.save(),
      (why) => this.showBanner(why),
    );
    this.prompt.el.prepend(this.images.el);
    this.queueEl = h("ul", { class: "queue", "aria-label": "Queued messages, sent when the turn ends", hidden: true });
    this.prompt.el.prepend(this.queueEl);
    this.images.watch(this.prompt.el);
    this.banner = h("div", { class: "banner", hidden: true });
    this.status = h("div", { class: "turn-status", role: "status", "aria-live": "polite" });
    // Shown while the user has scrolled up from the end: one click back.
    this.toEnd = button("Jump to the end", { class: "secondary jump-end", hidden: true }, () => {
      this.stick = true;
      this.scroller.scrollTop = this.scroller.scrollHeight;
      this.autoTop = this.scroller.scrollTop;
      this.toEnd.hidden = true;
      this.prompt.focus();
    });
    this.scroller = h("main", { class: "scroll" }, this.stream.el, this.permissions.el, this.reverts.el, this.toEnd);
    // Follow the end of the stream until the user scrolls up, and again once
    // they scroll back to the end. A scroll event may come after more text
    // arrived, so "not at the end" alone does not mean the user moved: only
    // a position above the one last set here does.
    this.scroller.addEventListener("scroll", () => {
      const s = this.scroller;
      if (s.scrollHeight - s.scrollTop - s.clientHeight < 40) this.stick = true;
      else if (s.scrollTop < this.autoTop - 2) this.stick = false;
      this.toEnd.hidden = this.stick;
    });
    // The observer runs after layout, so reading sizes here forces none
    // (doing it right after a batch's writes cost more than the writes).
    const follow = new ResizeObserver(() => {
      if (!this.stick) return;
      this.scroller.scrollTop = this.scroller.scrollHeight;
      this.autoTop = this.scroller.scrollTop;
    });
    follow.observe(this.stream.el);
    follow.observe(this.permissions.el);
    root.replaceChildren(this.header.el, this.header.panel, this.banner, this.scroller, this.status, this.prompt.el);

    window.addEventListener("message", (ev: MessageEvent) => this.enqueue(ev.data));
    // Escape stops a running turn, wherever the focus is in the panel,
    // unless something nearer took it (a completion list, the session
    // list, a permission card, which Escape rejects).
    document.addEventListener("keydown", (ev) => {
      if (ev.key !== "Escape" || ev.defaultPrevented || ev.isComposing) return;
      if (this.header.closeList()) {
        ev.preventDefault();
        return;
      }
      if (!(this.pending || this.stream.transcript.running)) return;
      ev.preventDefault();
      this.cancel();
    });
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "hidden") this.saveNow();
    });
    this.restore();
    this.post({ type: "webviewReady" });
  }

  private post(m: WebviewMessage): void {
    this.api.postMessage(m);
  }

  // ---- host messages, one batch per frame ----

  private enqueue(m: unknown): void {
    if (!m || typeof m !== "object" || typeof (m as { type?: unknown }).type !== "string") return;
    this.queue.push(m as HostMessage);
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => this.flush());
    // A hidden webview gets no frames; do not let the queue grow meanwhile.
    this.timer = window.setTimeout(() => this.flush(), hiddenFlushDelay);
  }

  private flush(): void {
    cancelAnimationFrame(this.frame);
    clearTimeout(this.timer);
    this.frame = 0;
    this.timer = 0;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const start = performance.now();
    let updates: SessionUpdate[] = [];
    const applyUpdates = () => {
      if (updates.length) this.stream.apply(updates);
      updates = [];
    };
    for (const m of batch) {
      if (m.type === "update") {
        if (!this.acceptUpdate(m.sessionId)) continue;
        if (!m.update || typeof m.update !== "object") continue;
        // The turn we sent has started (or already ended): no longer pending.
        if (m.update.sessionUpdate === "state_update") this.pending = false;
        updates.push(m.update);
        this.settleSent(m.update);
        if (m.turnId) this.turnActions(m.turnId, m.update, applyUpdates);
        continue;
      }
      applyUpdates();
      try {
        this.handle(m);
      } catch (err) {
        console.warn("darman: dropped a message it could not read", m, err);
      }
    }
    applyUpdates();
    this.updateStatus();
    this.drain();
    this.save();
    // Read by bench/render.mjs: the time to handle one batch.
    performance.measure("darman:batch", { start, end: performance.now(), detail: batch.length });
    if (++this.batches % 10_000 === 0) performance.clearMeasures("darman:batch");
  }

  private acceptUpdate(sessionId: string): boolean {
    if (!sessionId) return false;
    if (this.sessionId === undefined) {
      // The first update of a prompt sent without a session names it.
      this.sessionId = sessionId;
      this.header.setCurrent(sessionId);
    }
    return sessionId === this.sessionId;
  }

  private handle(m: HostMessage): void {
    switch (m.type) {
      case "ready":
        this.models = m.models ?? [];
        this.model = m.model ?? "";
        this.commands = m.commands ?? [];
        this.header.setModels(this.models, this.model);
        this.header.setAgents(m.agents);
        this.prompt.setCommands(this.commands);
        this.showBanner(null);
        break;
      case "models":
        this.models = Array.isArray(m.models) ? m.models : [];
        this.header.setModels(this.models, this.model);
        break;
      case "commands":
        this.commands = Array.isArray(m.commands) ? m.commands : [];
        this.prompt.setCommands(this.commands);
        this.save();
        break;
      case "serverError":
        this.pending = false;
        this.showBanner(m.message, m.action, false);
        break;
      case "error":
        this.pending = false;
        this.unsend();
        this.showBanner(m.message, undefined, true);
        break;
      case "sessions":
        this.sessions = m.sessions ?? [];
        this.header.setSessions(this.sessions, this.sessionId ?? m.current, m.more === true);
        if (this.sessionId === undefined && m.current) this.sessionId = m.current;
        {
          // darman names a session after its first turn: the header follows.
          const cur = this.sessions.find((x) => x.sessionId === this.sessionId);
          if (cur?.title) this.title = cur.title;
        }
        break;
      case "session":
        // An empty id (the current session was deleted) is an empty panel
        // whose next prompt starts a session.
        this.pending = false;
        // Queued follow-ups belong to the session they were typed in.
        if ((m.sessionId || undefined) !== this.sessionId && this.queued.length) {
          this.queued = [];
          this.renderQueue();
        }
        this.sessionId = m.sessionId || undefined;
        this.title = m.title ?? "";
        this.header.setTitle(this.title);
        this.header.setCurrent(this.sessionId);
        if (this.sessionId) this.header.agent = m.agent || "build";
        this.showHistory(Array.isArray(m.updates) ? m.updates : [], Array.isArray(m.turns) ? m.turns : [], m.state === "running");
        if (m.state === "running" && !this.stream.transcript.running) this.stream.transcript.state = "running";
        this.stick = true;
        break;
      case "permission":
        this.permissions.add(m.request);
        break;
      case "permissionClosed":
        this.permissions.close(m.requestId);
        break;
      case "context":
        this.prompt.setEditorChip(m.chip ?? null);
        break;
      case "mentions":
        this.prompt.mentions(m.id, m.items);
        break;
      case "image":
        this.pictures.received(m);
        break;
      case "revertReport":
      case "revertFailed":
        this.reverts.handle(m);
        break;
      case "applied":
        // The applied block is a change of the last turn: its Revert is
        // offered under it, unless the turn's own is already the last entry.
        if (m.sessionId === this.sessionId && !this.stream.el.lastElementChild?.classList.contains("turn-actions")) {
          this.stream.el.append(this.reverts.turnAction(m.turnId));
        }
        break;
      case "focusPrompt":
        this.prompt.focus();
        break;
      case "fillPrompt":
        this.prompt.setText(m.text ?? "");
        this.prompt.focus();
        if (m.send) this.prompt.submit();
        break;
    }
  }

  /**
   * A loaded history, turn by turn: each finished turn that ran a tool that
   * may change files gets its Revert under it, as it had live.
   */
  private showHistory(updates: SessionUpdate[], turns: TurnStart[], running: boolean): void {
    const valid = turns.filter((t, i) => t && typeof t.turnId === "string" && Number.isInteger(t.start) && t.start >= (turns[i - 1]?.start ?? 0));
    this.stream.reset(undefined, valid.length ? updates.slice(0, valid[0].start) : updates);
    this.changing.clear();
    valid.forEach((t, i) => {
      const last = i === valid.length - 1;
      const part = updates.slice(t.start, last ? updates.length : valid[i + 1].start);
      this.stream.apply(part);
      const changed = t.files === true || part.some((u) => (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") && changingKinds.has(u.kind));
      if (changed && !(last && running)) this.stream.el.append(this.reverts.turnAction(t.turnId));
    });
  }

  /**
   * A finished live turn that ran a tool that may change files gets its
   * Revert action right under it (its updates are rendered first).
   */
  private turnActions(turnId: string, u: SessionUpdate, applyUpdates: () => void): void {
    if ((u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") && changingKinds.has(u.kind)) {
      this.changing.add(turnId);
    } else if (u.sessionUpdate === "state_update" && u.state !== "running" && u.state !== "requires_action" && this.changing.delete(turnId)) {
      applyUpdates();
      this.stream.el.append(this.reverts.turnAction(turnId));
    }
  }

  // settleSent forgets the sent prompt's images once darman took the
  // prompt (its user message came: the message's own updates show the
  // images); a turn that ended before it did gives them back to the tray.
  private settleSent(u: SessionUpdate): void {
    if (!this.sentImages) return;
    if (u.sessionUpdate === "user_message_chunk") this.sentImages = undefined;
    else if (u.sessionUpdate === "state_update" && u.state !== "running" && u.state !== "requires_action") this.unsend();
  }

  // unsend puts the images of a prompt darman did not take (a text-only
  // model refuses them) back in the tray, to send again.
  private unsend(): void {
    if (!this.sentImages) return;
    this.images.restore(this.sentImages);
    this.sentImages = undefined;
  }

  // ---- what the user does ----

  /** The plan → build hand-off: build carries out the plan of the session's last answer (the server writes the prompt). */
  private handoff(): void {
    if (!this.sessionId || this.busy()) return;
    this.header.agent = "build";
    this.post({ type: "handoff", sessionId: this.sessionId });
    this.sending();
  }

  // busy says, and shows, that a turn runs and the box must wait.
  private busy(): boolean {
    if (!this.pending && !this.stream.transcript.running) return false;
    this.prompt.setRunning(true, "A turn is running: wait for it to finish or cancel it.");
    return true;
  }

  // submit is the prompt box's Enter: sent now, or while a turn runs
  // queued to be sent when it ends.
  private submit(text: string): boolean {
    if (!(this.pending || this.stream.transcript.running)) return this.send(text);
    if (!text || this.images.count > 0) {
      this.prompt.setRunning(true, "A turn is running: images wait for it to finish, or cancel it.");
      return false;
    }
    this.queued.push({ text, context: this.prompt.getChips() });
    this.prompt.clearPicked();
    this.renderQueue();
    this.save();
    return true;
  }

  // drain sends the first queued message once the turn ended well; a
  // turn cancelled or failed gives them back to the box instead, for the
  // user to look at again.
  private drain(): void {
    if (this.queued.length === 0 || this.pending || this.stream.transcript.running || this.permissions.requests().length) return;
    const state = this.stream.transcript.state;
    if (state === "cancelled" || state === "failed") {
      const back = this.queued.map((q) => q.text).join("\n\n");
      this.queued = [];
      this.renderQueue();
      if (!this.prompt.text.trim()) this.prompt.setText(back);
      this.prompt.setRunning(false, state === "cancelled" ? "The turn was cancelled: your queued message is back in the box." : "The turn failed: your queued message is back in the box.");
      return;
    }
    const next = this.queued.shift()!;
    this.renderQueue();
    this.send(next.text, next.context);
  }

  private renderQueue(): void {
    this.queueEl.hidden = this.queued.length === 0;
    this.queueEl.replaceChildren(
      ...this.queued.map((q, i) =>
        h(
          "li",
          { class: "queued" },
          h("span", { class: "queued-label" }, "Queued"),
          h("span", { class: "queued-text", title: q.text }, q.text),
          button("Edit", { class: "link", "aria-label": `Edit the queued message: ${q.text}` }, () => {
            this.queued.splice(i, 1);
            this.renderQueue();
            this.prompt.setText(q.text);
            this.prompt.focus();
            this.save();
          }),
          button(`Remove the queued message: ${q.text}`, { class: "icon-button" }, () => {
            this.queued.splice(i, 1);
            this.renderQueue();
            this.prompt.focus();
            this.save();
          }, icon("close")),
        ),
      ),
    );
  }

  // send sends what was typed; darman runs "/name args" as the command of
  // that name, in every editor alike.
  private send(text: string, context = this.prompt.getChips()): boolean {
    if (this.busy()) return false;
    const sessionId = this.sessionId;
    const images = this.images.count > 0 ? this.images.take() : undefined;
    this.sentImages = images;
    this.post(compact({ type: "prompt", text, context, model: this.header.model || undefined, sessionId, images, agent: this.header.agent || undefined }));
    this.prompt.clearPicked();
    this.sending();
    return true;
  }

  // sending marks a prompt posted and not yet acknowledged.
  private sending(): void {
    this.pending = true;
    this.stick = true;
    this.showBanner(null);
    this.updateStatus();
  }

  private cancel(): void {
    if (this.sessionId) this.post({ type: "cancel", sessionId: this.sessionId });
    // A prompt the host never acknowledged must not lock the box.
    if (!this.stream.transcript.running) this.pending = false;
    this.updateStatus();
    // The Cancel button hides as the turn stops: the caret goes back to
    // the box rather than to nowhere.
    this.prompt.focus();
  }

  private newSession(): void {
    this.post({ type: "newSession" });
    this.sessionId = undefined;
    this.title = "";
    this.pending = false;
    this.queued = [];
    this.renderQueue();
    this.header.setTitle("");
    this.header.setCurrent(undefined);
    this.stream.reset();
    this.updateStatus();
    this.save();
    this.prompt.focus();
  }

  // questionsChanged: a permission card came or went. The tool cards it
  // is about say they wait for the user.
  private questionsChanged(): void {
    this.stream.setWaiting(this.permissions.requests().map((r) => r.toolCall?.toolCallId ?? ""));
    this.updateStatus();
    this.save();
  }

  private updateStatus(): void {
    const t = this.stream.transcript;
    const asked = this.permissions.requests().length;
    const waiting = t.state === "requires_action" || asked > 0;
    const busy = this.pending || t.running || asked > 0;
    this.reverts.setIdle(this.sessionId, !busy, t.entries.some((e) => e.kind === "user"));
    const label = !busy ? "" : waiting ? "darman is waiting for you" : this.pending ? "Sending…" : "Working…";
    const key = `${label}\n${asked}`;
    // Called after every batch: touch the DOM only on a change, so the
    // spinner keeps turning and screen readers hear each state once.
    if (key === this.statusLabel) return;
    this.statusLabel = key;
    this.status.replaceChildren();
    this.status.classList.toggle("busy", busy);
    this.status.classList.toggle("waiting", waiting && busy);
    if (waiting && busy) {
      // Waiting is not working: no spinner, and the question one click
      // (or Enter) away however far the stream scrolled past it.
      this.status.append(icon("warning"), h("span", null, label));
      if (asked > 0) this.status.append(button(asked === 1 ? "Jump to the question" : `Jump to the questions (${asked})`, { class: "link jump-question" }, () => this.permissions.reveal()));
    } else if (busy) {
      this.status.append(h("span", { class: "spinner", "aria-hidden": "true" }), h("span", null, label));
    }
    this.prompt.setRunning(busy);
  }

  private showBanner(message: string | null, action?: { label: string; command: string }, dismissable = false): void {
    if (!message) {
      this.banner.hidden = true;
      this.banner.replaceChildren();
      return;
    }
    this.banner.hidden = false;
    this.banner.setAttribute("role", "alert");
    this.banner.className = dismissable ? "banner error" : "banner server-error";
    this.banner.replaceChildren(icon("error"), h("span", { class: "banner-text" }, message));
    if (action?.command) {
      this.banner.append(button(action.label || action.command, { class: "primary" }, () => this.post({ type: "runCommand", command: action.command })));
    }
    if (dismissable) this.banner.append(button("Dismiss", { class: "icon-button" }, () => this.showBanner(null), icon("close")));
  }

  // ---- state that survives the view being hidden ----

  private save(): void {
    if (this.saveTimer) return;
    this.saveTimer = window.setTimeout(() => this.saveNow(), this.stream.transcript.running ? saveDelayRunning : saveDelay);
  }

  private saveNow(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = 0;
    const start = performance.now();
    const state: State = {
      v: stateVersion,
      sessionId: this.sessionId,
      title: this.title,
      transcript: this.stream.transcript.save(),
      models: this.models,
      model: this.header.model || this.model,
      commands: this.commands,
      sessions: this.sessions,
      draft: this.prompt.text,
      history: this.prompt.history,
      chips: this.prompt.getChips(),
      queued: this.queued,
    };
    this.api.setState(state);
    // Read by bench/render.mjs: what saving the state costs.
    performance.measure("darman:save", { start, end: performance.now() });
    if (++this.saves % 1000 === 0) performance.clearMeasures("darman:save");
  }

  private restore(): void {
    const s = this.api.getState() as Partial<State> | undefined;
    if (!s || typeof s !== "object" || s.v !== stateVersion) {
      this.updateStatus();
      return;
    }
    this.sessionId = s.sessionId;
    this.title = s.title ?? "";
    this.models = s.models ?? [];
    this.model = s.model ?? "";
    this.commands = s.commands ?? [];
    this.sessions = s.sessions ?? [];
    this.header.setModels(this.models, this.model);
    this.header.setSessions(this.sessions, this.sessionId);
    this.header.setTitle(this.title);
    this.prompt.setCommands(this.commands);
    this.prompt.setHistory(Array.isArray(s.history) ? s.history.filter((x) => typeof x === "string") : []);
    this.prompt.setChips(s.chips ?? []);
    this.prompt.setText(s.draft ?? "");
    this.queued = Array.isArray(s.queued) ? s.queued.filter((q) => q && typeof q.text === "string").map((q) => ({ text: q.text, context: Array.isArray(q.context) ? q.context : [] })) : [];
    this.renderQueue();
    this.stream.reset(s.transcript && Array.isArray(s.transcript.entries) ? s.transcript : undefined);
    this.updateStatus();
  }
}

// compact drops undefined fields, so a message says only what it means.
function compact<T extends object>(m: T): T {
  return Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined)) as T;
}
