// The chat panel's host side: it routes the webview's messages to darman's
// commands and darman's notifications and requests to the webview. It
// speaks to darman through the Server interface (the LanguageClient in the
// extension, a plain JSON-RPC connection in the tests), so the routing is
// tested against the real darman lsp.

import * as vscode from "vscode";
import type {
  AgentInfo,
  CommandInfo,
  ContextChip,
  HostMessage,
  ModelInfo,
  PermissionOptionId,
  PermissionRequest,
  SessionSummary,
  SessionUpdate,
  TurnStart,
  TurnState,
  WebviewMessage,
} from "../shared/protocol";
import { applyCodeBlock } from "./apply";
import { DiffContent, proposedScheme } from "./diff";
import { fetchImage, imageArgs } from "./images";
import { mentionsFor, referenceOf } from "./mentions";
import { openPatch, runRevert } from "./revert";

/** What the controller needs of the language client. */
export interface Server {
  executeCommand(command: string, argument?: object): Promise<unknown>;
}

/** The webview, once VS Code resolved it. */
export interface View {
  post(message: HostMessage): void;
}

/** darman's answer to darman/requestPermission. */
export type PermissionOutcome =
  | { outcome: { outcome: "selected"; optionId: PermissionOptionId; message?: string } }
  | { outcome: { outcome: "cancelled" } };

/** What the status bar shows. */
export type ChatState = {
  model: string;
  running: number;
  error?: string;
  sandbox?: SandboxState;
  /** Open permission questions, and what the oldest one asks. */
  waiting?: number;
  question?: string;
};
/** The OS sandbox of the model's commands, as darman.status reports it (agent.sandbox). */
export type SandboxState = { active: boolean; summary: string };

export type ControllerOptions = {
  server: Server;
  /** Persists the current session across reloads (context.workspaceState). */
  memento: vscode.Memento;
  diffs: DiffContent;
  /** The darman.model setting: the model of new sessions when not chosen in the panel. */
  configuredModel: () => string;
  /** The darman.openProposedDiff setting: an edit's question opens its proposed diff; unset means no. */
  openProposedDiff?: () => boolean;
  /** Reveals the chat view; the webview posts webviewReady when it is there. */
  reveal: () => void;
  onState?: (state: ChatState) => void;
  /** A permission question arrived (the extension tells a user who does not see the panel). */
  onQuestion?: (request: PermissionRequest) => void;
  log?: (line: string) => void;
};

const currentKey = "darman.currentSession";
// The session picker lists this many sessions at a time (darman.session.list's
// limit), and refreshes at most maxSessionPage at once.
const sessionPage = 50;
const maxSessionPage = 1000;
/** The terminal "Run in terminal" types a code block's commands into. */
const terminalName = "darman";
const modelKey = "darman.chosenModel";
/** VS Code commands the webview may run (serverError's action buttons). */
const webviewCommands = new Set(["darman.restart", "darman.showOutput", "darman.openInstallDocs", "workbench.action.openSettings"]);

export class ChatController {
  private view: View | undefined;
  private ready = false;
  private readyWaiters: (() => void)[] = [];
  private models: ModelInfo[] = [];
  private defaultModel = "";
  private commands: CommandInfo[] = [];
  private agents: AgentInfo[] = [];
  private serverError: HostMessage | undefined;
  private pending = new Map<string, { request: PermissionRequest; resolve: (o: PermissionOutcome) => void }>();
  private running = new Set<string>();
  private prompts = new Map<string, { sessionId: string; turnId?: string; update: SessionUpdate }[]>();
  // Sessions whose code block is being applied (darman.turn.apply), and
  // whether its proposed diff was opened for the question.
  private applying = new Map<string, { proposed: boolean }>();
  private context: ContextChip | null = null;
  private dismissed: string | undefined;
  // The sessions the picker lists, newest first, and where the next page begins.
  private listed: SessionSummary[] = [];
  private sessionCursor: string | undefined;

  constructor(private readonly o: ControllerOptions) {}

  get currentSession(): string | undefined {
    return this.o.memento.get<string>(currentKey);
  }

  /** The model new turns use: the panel's choice, darman.model, darman's default. */
  get model(): string {
    return this.o.memento.get<string>(modelKey) || this.o.configuredModel() || this.defaultModel;
  }

  /** attach is called when the webview is resolved; detach when it is disposed. */
  attach(view: View): void {
    this.view = view;
    this.ready = false;
  }

  detach(): void {
    this.view = undefined;
    this.ready = false;
  }

  /** Resolves when the webview has loaded (or at once when it has). */
  whenReady(timeoutMs = 10_000): Promise<boolean> {
    if (this.ready) {
      return Promise.resolve(true);
    }
    this.o.reveal();
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), timeoutMs);
      this.readyWaiters.push(() => {
        clearTimeout(t);
        resolve(true);
      });
    });
  }

  private post(message: HostMessage): void {
    if (this.view && this.ready) {
      this.view.post(message);
    }
  }

  private emitState(): void {
    const oldest = this.pending.values().next().value;
    this.o.onState?.({
      model: this.model,
      running: this.running.size,
      error: this.serverError?.type === "serverError" ? this.serverError.message : undefined,
      sandbox: this.sandbox,
      waiting: this.pending.size,
      question: oldest ? questionText(oldest.request) : undefined,
    });
  }

  private sandbox: SandboxState | undefined;

  /** Asks darman.status for the sandbox once the agent is up (it starts after initialize). */
  private async watchSandbox(): Promise<void> {
    for (let i = 0; i < 20; i++) {
      try {
        const st = (await this.o.server.executeCommand("darman.status")) as { agent?: { state?: string; sandbox?: SandboxState } };
        if (st?.agent?.sandbox) {
          this.sandbox = st.agent.sandbox;
          this.emitState();
          return;
        }
        if (st?.agent?.state && st.agent.state !== "starting") return;
      } catch {
        return;
      }
      await new Promise<void>((resolve) => setTimeout(resolve, 500).unref?.());
    }
  }

  // ---- from the server ----

  /** The server answered initialize: its models, default model and commands. */
  async serverStarted(init: { models?: ModelInfo[]; model?: string; agents?: AgentInfo[] }): Promise<void> {
    this.serverError = undefined;
    this.agents = primaryAgents(init.agents);
    this.models = Array.isArray(init.models) ? init.models : [];
    this.defaultModel = typeof init.model === "string" ? init.model : "";
    if (this.defaultModel === "") {
      // Servers that do not send the default model report it in darman.status
      // once the agent is ready.
      try {
        const st = (await this.o.server.executeCommand("darman.status")) as { agent?: { model?: string } };
        this.defaultModel = st?.agent?.model ?? "";
      } catch (err) {
        this.o.log?.(`darman.status failed: ${String(err)}`);
      }
    }
    this.commands = await this.listCommands();
    this.emitState();
    this.sendReady();
    void this.watchSandbox();
    void this.listServedModels();
  }

  /**
   * listServedModels asks darman for the models the endpoints serve (an
   * Ollama server's pulled models, say), which may take the network a
   * moment: the picker offers initialize's list until they come.
   */
  private async listServedModels(): Promise<void> {
    try {
      const res = (await this.o.server.executeCommand("darman.model.list")) as { models?: ModelInfo[] };
      if (!Array.isArray(res?.models)) return;
      this.models = res.models;
      this.post({ type: "models", models: this.models });
    } catch (err) {
      // Older darman has no darman.model.list: the configured and catalog models stay.
      this.o.log?.(`darman.model.list: ${errorText(err)}`);
    }
  }

  private async listCommands(): Promise<CommandInfo[]> {
    try {
      const res = (await this.o.server.executeCommand("darman.command.list")) as { commands?: CommandInfo[] };
      return Array.isArray(res?.commands) ? res.commands : [];
    } catch (err) {
      // Older darman has no darman.command.list: no completion, commands still run by name.
      this.o.log?.(`darman.command.list is not available: ${String(err)}`);
      return [];
    }
  }

  /** darman/agentsChanged: the panel's agent picker follows the agent files. */
  agentsChanged(agents: AgentInfo[] | undefined): void {
    this.agents = primaryAgents(agents);
    this.sendReady();
  }

  /** darman.model changed: the status bar and the panel's picker follow it. */
  modelSettingChanged(): void {
    this.emitState();
    this.sendReady();
  }

  /** The server could not start or died. */
  serverFailed(message: string, action?: { label: string; command: string }): void {
    this.serverError = { type: "serverError", message, action };
    for (const [id, p] of this.pending) {
      p.resolve({ outcome: { outcome: "cancelled" } });
      this.post({ type: "permissionClosed", requestId: id });
    }
    this.pending.clear();
    this.running.clear();
    this.post(this.serverError);
    this.emitState();
  }

  private sendReady(): void {
    this.post({ type: "ready", models: this.models, model: this.model, commands: this.commands, agents: this.agents });
  }

  /** darman/sessionUpdate. */
  sessionUpdate(params: { sessionId: string; turnId?: string; update: SessionUpdate }): void {
    if (params.update.sessionUpdate === "new_session") {
      // /new typed in the panel's session: the panel shows the new one
      // from now on (the rest of the old session's turn is not shown).
      if (params.sessionId === this.currentSession && params.update.newSessionId) {
        this.switchTo(params.update.newSessionId);
      }
      return;
    }
    if (params.update.sessionUpdate === "state_update") {
      const starts = params.update.state === "running" && !this.running.has(params.sessionId);
      this.turnState(params.sessionId, params.update.state);
      if (starts && params.sessionId !== this.currentSession && !this.running.has(this.currentSession ?? "")) {
        // A turn started elsewhere (a code action, or the panel's own prompt
        // whose new session's id has not come back yet): every turn begins
        // with running, so the panel follows it from its first update. Not
        // while the panel's session runs a turn of its own.
        this.follow(params.sessionId);
      }
    }
    if (params.sessionId === this.currentSession) {
      this.post({ type: "update", sessionId: params.sessionId, turnId: params.turnId, update: params.update });
      const u = params.update;
      if (u.sessionUpdate === "state_update" && u.state !== "running" && u.state !== "requires_action") {
        // A turn's end is when darman has named a new session: the
        // panel's header and list show the title.
        void this.listSessions().catch((err) => this.o.log?.(`listing sessions: ${errorText(err)}`));
      }
    } else if (params.update.sessionUpdate === "user_message_chunk" && !this.running.has(params.sessionId)) {
      // darman sends the prompt just before the turn's running state: keep
      // it, so a panel that follows the turn shows what was asked.
      this.prompts.set(params.sessionId, [...(this.prompts.get(params.sessionId) ?? []), params].slice(-20));
    }
  }

  private switchTo(sessionId: string): void {
    void this.o.memento.update(currentKey, sessionId);
    void this.load(sessionId)
      .then(() => this.listSessions())
      .catch((err) => this.post({ type: "error", message: `Opening the new session failed: ${errorText(err)}` }));
  }

  private follow(sessionId: string): void {
    void this.o.memento.update(currentKey, sessionId);
    const prompt = this.prompts.get(sessionId) ?? [];
    this.prompts.clear();
    // The prompt kept from before the turn's running state is passed on
    // as the turn's first update, as it would have been had the panel
    // known the session already (darman may send it before it answers
    // the prompt that made the session).
    this.post({ type: "session", sessionId, title: "", model: this.model, state: "running", updates: [] });
    for (const p of prompt) {
      this.post({ type: "update", sessionId, turnId: p.turnId, update: p.update });
    }
    void this.listSessions().catch((err) => this.o.log?.(`listing sessions: ${errorText(err)}`));
  }

  private turnState(sessionId: string, state: TurnState): void {
    const before = this.running.size;
    if (state === "running" || state === "requires_action") {
      this.running.add(sessionId);
    } else {
      this.running.delete(sessionId);
    }
    if (before !== this.running.size) {
      this.emitState();
    }
  }

  /**
   * darman/requestPermission: shows the card in the panel and answers with
   * the user's choice. A request cancelled by darman (timeout, turn
   * cancelled) drops the card.
   */
  requestPermission(request: PermissionRequest, token?: vscode.CancellationToken): Promise<PermissionOutcome> {
    return new Promise((resolve) => {
      const done = (o: PermissionOutcome) => {
        if (this.pending.delete(request.requestId)) {
          resolve(o);
          this.emitState();
        }
      };
      this.pending.set(request.requestId, { request, resolve: done });
      this.emitState();
      token?.onCancellationRequested(() => {
        done({ outcome: { outcome: "cancelled" } });
        this.post({ type: "permissionClosed", requestId: request.requestId });
      });
      if (request.sessionId !== this.currentSession) {
        // The question belongs to another session (a turn started from a
        // code action): show that session, then the card.
        void this.load(request.sessionId).then(() => this.post({ type: "permission", request }));
      } else {
        this.post({ type: "permission", request });
      }
      // Not revealed: that would take the focus from the editor. The
      // extension shows the question's badge, status and notification.
      this.o.onQuestion?.(request);
      // A code block's apply is asked without a tool call: the user is
      // about to decide on it, so its proposed diff opens at once; a
      // tool's edit opens its diff as darman.openProposedDiff says.
      const applying = this.applying.get(request.sessionId);
      if (applying && !request.toolCall.toolCallId) {
        applying.proposed = this.openProposed(request);
      } else if (this.o.openProposedDiff?.()) {
        this.openProposed(request);
      }
    });
  }

  /** Opens the diff editor on what a question proposes (its first diff); false when it proposes none. */
  private openProposed(request: PermissionRequest): boolean {
    const d = request.toolCall.content?.find((c) => c.type === "diff");
    if (!d || d.type !== "diff") return false;
    void this.openDiff({ uri: d.uri, oldText: d.oldText, newText: d.newText, title: `${request.toolCall.title} (proposed)` }).catch((err) =>
      this.o.log?.(`opening the proposed diff: ${errorText(err)}`),
    );
    return true;
  }

  /**
   * A code block applied as an edit of the session's last turn
   * (darman.turn.apply): darman asks, writes and records it; the webview
   * then offers the turn's Revert. A change that was not asked about (the
   * rules allow edits) is shown in the diff editor once made.
   */
  private async applyToFile(code: string, file?: string): Promise<void> {
    const sessionId = this.currentSession;
    const state = { proposed: false };
    if (sessionId) this.applying.set(sessionId, state);
    try {
      const { target, result } = await applyCodeBlock(this.o.server, sessionId, code, file);
      if (!result.applied) {
        throw new Error(result.denied ? `not applied: ${result.message}` : result.message);
      }
      if (!result.unchanged && !state.proposed) {
        await this.openDiff({ uri: target.uri.toString(), oldText: target.before, title: `${target.uri.path.split("/").pop()}: code block applied` });
      }
      this.post({ type: "applied", sessionId: sessionId!, turnId: result.turnId, uri: result.uri, message: result.message });
    } finally {
      if (sessionId && this.applying.get(sessionId) === state) this.applying.delete(sessionId);
    }
  }

  /**
   * darman/openDiff, and a card's "Open diff": the change a tool proposes
   * or made, beside the editor without taking focus. The right side is the
   * file itself when it holds the new text (so it can be edited there),
   * else the new text: a change waiting for approval, or one a later edit
   * went over.
   */
  async openDiff(p: { uri: string; oldText: string; newText?: string; title?: string }): Promise<void> {
    const target = vscode.Uri.parse(p.uri);
    const before = this.o.diffs.put(target, p.oldText);
    let after: vscode.Uri = target;
    if (p.newText !== undefined && (await currentText(target)) !== p.newText) {
      after = this.o.diffs.put(target, p.newText, proposedScheme);
    }
    const title = p.title || `${target.path.split("/").pop()} (darman)`;
    await vscode.commands.executeCommand("vscode.diff", before, after, title, { preview: true, preserveFocus: true });
  }

  // ---- from the editor ----

  /** The active editor's selection or file, offered as a context chip. */
  offerContext(chip: ContextChip | null): void {
    const key = chip ? `${chip.uri}#${chip.label}` : undefined;
    if (key !== undefined && key === this.dismissed) {
      return; // removed by the user; offered again once the selection changes
    }
    this.dismissed = undefined;
    this.context = chip;
    this.post({ type: "context", chip });
  }

  /** Starts a turn from the palette: the panel shows it as if typed there. */
  async promptFromEditor(text: string, chip: ContextChip | null): Promise<void> {
    await this.whenReady();
    await this.handle({ type: "prompt", text, context: chip ? [chip] : [], sessionId: this.currentSession });
  }

  /** darman.focusChat: the panel shown, the caret in its prompt box. */
  async focusPrompt(): Promise<void> {
    this.o.reveal();
    if (await this.whenReady()) this.post({ type: "focusPrompt" });
  }

  async newSession(): Promise<void> {
    await this.whenReady();
    await this.handle({ type: "newSession" });
  }

  /** darman.revertLastTurn / darman.redo from the palette: the panel previews it for the current session. */
  async revertFromPalette(redo: boolean): Promise<void> {
    await this.whenReady();
    await this.handle({ type: "revert", sessionId: this.currentSession ?? "", preview: true, ...(redo ? { redo } : {}) });
  }

  // ---- from the webview ----

  /** Routes one webview message; failures are shown in the panel. */
  async handle(m: WebviewMessage): Promise<void> {
    try {
      await this.route(m);
    } catch (err) {
      const message = errorText(err);
      this.o.log?.(`${m.type}: ${message}`);
      this.post({ type: "error", message: `${describe(m)} failed: ${message}` });
    }
  }

  private async route(m: WebviewMessage): Promise<void> {
    switch (m.type) {
      case "webviewReady":
        return this.webviewReady();
      case "prompt": {
        // The editor's chip is the prompt's context, what was picked after
        // @ its references, which darman reads.
        const picked = m.context.filter((c) => c.kind);
        const editor = m.context.filter((c) => !c.kind);
        const arg: Record<string, unknown> = { prompt: withExtraContext(m.text, editor.slice(1)) };
        if (picked.length) {
          arg.references = picked.map(referenceOf);
        }
        const sessionId = m.sessionId ?? this.currentSession;
        if (sessionId) {
          arg.sessionId = sessionId;
        }
        if (editor[0]) {
          arg.context = lspContext(editor[0]);
        }
        const model = m.model || this.model;
        if (model) {
          arg.model = model;
        }
        const images = imageArgs(m.images);
        if (images) {
          arg.images = images;
        }
        if (m.agent) {
          arg.agent = m.agent;
        }
        return this.started(await this.o.server.executeCommand("darman.prompt", arg), sessionId);
      }
      case "handoff":
        // darman writes the hand-off prompt and runs it with build.
        return this.started(await this.o.server.executeCommand("darman.prompt", { sessionId: m.sessionId, handoff: true }), m.sessionId);
      case "mentionQuery":
        return this.post({ type: "mentions", id: m.id, items: await mentionsFor(m.query) });
      case "listCommands":
        this.commands = await this.listCommands();
        return this.post({ type: "commands", commands: this.commands });
      case "cancel":
        await this.o.server.executeCommand("darman.cancel", { sessionId: m.sessionId });
        return;
      case "answerPermission": {
        const p = this.pending.get(m.requestId);
        if (p) {
          p.resolve({ outcome: { outcome: "selected", optionId: m.optionId, ...(m.message ? { message: m.message } : {}) } });
        } else {
          // Asked before a reload of the window, or through another path:
          // darman.permission.answer answers any open question.
          await this.o.server.executeCommand("darman.permission.answer", {
            requestId: m.requestId,
            optionId: m.optionId,
            ...(m.message ? { message: m.message } : {}),
          });
        }
        this.post({ type: "permissionClosed", requestId: m.requestId });
        return;
      }
      case "newSession": {
        const model = this.model;
        const res = (await this.o.server.executeCommand("darman.session.new", model ? { model } : undefined)) as { sessionId: string };
        await this.o.memento.update(currentKey, res.sessionId);
        this.post({ type: "session", sessionId: res.sessionId, title: "", model, state: "idle", updates: [] });
        return this.listSessions();
      }
      case "loadSession":
        return this.load(m.sessionId);
      case "renameSession":
        try {
          await this.o.server.executeCommand("darman.session.rename", { sessionId: m.sessionId, title: m.title });
        } catch (err) {
          if (/darman\.session\.rename|unknown command|-32601|not found/i.test(errorText(err))) {
            throw new Error("this darman cannot rename sessions; update darman to rename them");
          }
          throw err;
        }
        return this.listSessions();
      case "deleteSession":
        await this.o.server.executeCommand("darman.session.delete", { sessionId: m.sessionId });
        if (m.sessionId === this.currentSession) {
          await this.o.memento.update(currentKey, undefined);
          this.post({ type: "session", sessionId: "", title: "", model: this.model, state: "idle", updates: [] });
        }
        return this.listSessions();
      case "listSessions":
        return this.listSessions();
      case "moreSessions":
        return this.moreSessions();
      case "setModel":
        await this.o.memento.update(modelKey, m.model);
        this.emitState();
        this.sendReady();
        return;
      case "openDiff":
        return this.openDiff(m);
      case "openLocation": {
        const r = m.location.range;
        const range = new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
        await vscode.window.showTextDocument(vscode.Uri.parse(m.location.uri), { selection: range, preview: true });
        return;
      }
      case "runInTerminal": {
        // Typed into darman's terminal, not run: the user reads it there
        // and presses Enter (the model wrote it; nothing asked the rules).
        const t = vscode.window.terminals.find((x) => x.name === terminalName) ?? vscode.window.createTerminal({ name: terminalName });
        t.show(false);
        t.sendText(m.text, false);
        return;
      }
      case "insertAtCursor": {
        const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
        if (!editor) {
          throw new Error("no editor is open to insert into; open a file and put the cursor where the text goes");
        }
        await editor.edit((b) => {
          for (const s of editor.selections) {
            b.replace(s, m.text);
          }
        });
        return;
      }
      case "applyToFile":
        return this.applyToFile(m.text, m.file);
      case "copy":
        await vscode.env.clipboard.writeText(m.text);
        return;
      case "removeContext":
        if (this.context && this.context.uri === m.uri) {
          this.dismissed = `${this.context.uri}#${this.context.label}`;
          this.context = null;
        }
        return;
      case "runCommand":
        if (!webviewCommands.has(m.command)) {
          throw new Error(`the panel may not run ${m.command}`);
        }
        await vscode.commands.executeCommand(m.command);
        return;
      case "revert":
        this.post(await runRevert(this.o.server, m, errorText));
        return;
      case "openPatch":
        return openPatch(this.o.diffs, m.text, m.title);
      case "fetchImage":
        this.post(await fetchImage(this.o.server, m.uri, errorText));
        return;
      default: {
        const never: never = m;
        throw new Error(`unknown message ${JSON.stringify(never)}`);
      }
    }
  }

  private async webviewReady(): Promise<void> {
    this.ready = true;
    for (const w of this.readyWaiters.splice(0)) {
      w();
    }
    if (this.serverError) {
      this.post(this.serverError);
      return;
    }
    this.sendReady();
    this.post({ type: "context", chip: this.context });
    await this.listSessions();
    const current = this.currentSession;
    if (current) {
      await this.load(current).catch(async (err) => {
        // The session was deleted elsewhere: start from an empty panel.
        this.o.log?.(`restoring session ${current}: ${errorText(err)}`);
        await this.o.memento.update(currentKey, undefined);
      });
    }
    for (const p of this.pending.values()) {
      if (p.request.sessionId === this.currentSession) {
        this.post({ type: "permission", request: p.request });
      }
    }
  }

  private async started(result: unknown, previous: string | undefined): Promise<void> {
    const res = result as { sessionId: string; turnId: string };
    if (res.sessionId !== previous) {
      await this.o.memento.update(currentKey, res.sessionId);
      await this.listSessions();
    }
  }

  private async load(sessionId: string): Promise<void> {
    const s = (await this.o.server.executeCommand("darman.session.load", { sessionId })) as {
      sessionId: string;
      title: string;
      model: string;
      agent?: string;
      state: string;
      updates: SessionUpdate[];
      more?: boolean;
      turns?: TurnStart[];
    };
    await this.o.memento.update(currentKey, s.sessionId);
    // darman answers with the last page of a long session's history, what
    // the panel needs to show it and continue it; the panel says so rather
    // than show a history that seems to begin mid-way.
    const updates: SessionUpdate[] = s.more ? [olderNotShown(s.sessionId), ...(s.updates ?? [])] : (s.updates ?? []);
    // Where each turn begins, for its Revert (after the notice, if any).
    const turns = Array.isArray(s.turns) ? s.turns.map((t) => ({ turnId: t.turnId, start: t.start + (s.more ? 1 : 0) })) : [];
    // The session's agent (absent for build) is what the picker shows.
    this.post({ type: "session", sessionId: s.sessionId, title: s.title, model: s.model, state: s.state, updates, ...(s.agent ? { agent: s.agent } : {}), ...(turns.length ? { turns } : {}) });
  }

  /**
   * listSessions refreshes the picker's list: the newest sessions, as many
   * as it showed (a page at least), so a long history costs a page.
   */
  private async listSessions(): Promise<void> {
    const limit = Math.min(maxSessionPage, Math.max(sessionPage, this.listed.length));
    const res = (await this.o.server.executeCommand("darman.session.list", { limit })) as { sessions?: SessionSummary[]; nextCursor?: string };
    this.listed = res.sessions ?? [];
    this.sessionCursor = res.nextCursor;
    this.postSessions();
  }

  /** moreSessions adds the next page of older sessions to the picker's list. */
  private async moreSessions(): Promise<void> {
    if (!this.sessionCursor) return this.listSessions();
    const res = (await this.o.server.executeCommand("darman.session.list", { limit: sessionPage, cursor: this.sessionCursor })) as {
      sessions?: SessionSummary[];
      nextCursor?: string;
    };
    // A session updated between two pages moved to the front: keep it once.
    const have = new Set(this.listed.map((x) => x.sessionId));
    this.listed = [...this.listed, ...(res.sessions ?? []).filter((x) => !have.has(x.sessionId))];
    this.sessionCursor = res.nextCursor;
    this.postSessions();
  }

  private postSessions(): void {
    this.post({ type: "sessions", sessions: this.listed, current: this.currentSession, ...(this.sessionCursor ? { more: true } : {}) });
  }
}

/** What a permission question asks, in a line. */
export function questionText(r: PermissionRequest): string {
  return r.toolCall?.title || r.toolCall?.permission || "a permission";
}

/** The notice above a history that darman.session.load sent in part. */
export function olderNotShown(sessionId: string): SessionUpdate {
  return {
    sessionUpdate: "notice",
    level: "info",
    message: `Only the latest messages of this long session are shown here; \`darman sessions export ${sessionId}\` prints all of it.`,
  };
}

/** An LSP-shaped context for darman.prompt from a chip. */
function lspContext(chip: ContextChip): { uri: string; range?: ContextChip["range"] } {
  return chip.range ? { uri: chip.uri, range: chip.range } : { uri: chip.uri };
}

/**
 * darman.prompt takes one context; further chips are named in the prompt
 * (path and lines) so the model reads them with its tools.
 */
function withExtraContext(text: string, extra: ContextChip[]): string {
  if (extra.length === 0) {
    return text;
  }
  const lines = extra.map((c) => {
    const file = vscode.Uri.parse(c.uri).fsPath;
    return c.range ? `- ${file} lines ${c.range.start.line + 1}-${c.range.end.line + 1}` : `- ${file}`;
  });
  return `${text}\n\nAlso look at:\n${lines.join("\n")}`;
}

function describe(m: WebviewMessage): string {
  switch (m.type) {
    case "prompt":
      return "Sending the prompt";
    case "handoff":
      return "Handing the plan to build";
    case "cancel":
      return "Cancelling";
    case "newSession":
      return "Starting a session";
    case "loadSession":
      return "Opening the session";
    case "renameSession":
      return "Renaming the session";
    case "deleteSession":
      return "Deleting the session";
    case "answerPermission":
      return "Answering the permission question";
    case "openPatch":
      return "Opening the diff";
    case "applyToFile":
      return "Applying the code block";
    default:
      return m.type;
  }
}

export function errorText(err: unknown): string {
  if (err && typeof err === "object" && "message" in err) {
    return String((err as { message: unknown }).message);
  }
  return String(err);
}

/** The agents a session runs (mode primary or all), as the picker offers them. */
export function primaryAgents(agents: AgentInfo[] | undefined): AgentInfo[] {
  if (!Array.isArray(agents)) return [];
  return agents.filter((a) => a && typeof a.name === "string" && a.mode !== "subagent");
}

/** The text of a file as the editor has it, or undefined when it has none. */
async function currentText(uri: vscode.Uri): Promise<string | undefined> {
  try {
    return (await vscode.workspace.openTextDocument(uri)).getText();
  } catch {
    return undefined;
  }
}
