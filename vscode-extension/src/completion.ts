// Inline completions (ghost text) from darman: vscode-languageclient's
// inline completion feature sends textDocument/inlineCompletion to darman
// (LSP 3.18) once darman advertises inlineCompletionProvider, and cancels
// the request through the token VS Code passes (a newer keystroke cancels
// the older request: $/cancelRequest reaches darman, which closes the
// model's connection). This file decides whether a request is sent at all
// — the on/off setting, the per-language setting and a snooze like
// Copilot's — and owns the status-bar item that shows and changes that.

import * as vscode from "vscode";

/** The darman.inlineSuggest.* settings the extension reads (never sent to darman). */
export const settingsSection = "inlineSuggest";
/** Where the snooze's end (ms since the epoch) is kept: it outlives a reload. */
export const snoozeKey = "darman.inlineSuggest.snoozedUntil";
/** The commands of package.json's contributes.commands. */
export const commandIds = {
  menu: "darman.inlineSuggest.menu",
  toggle: "darman.inlineSuggest.toggle",
  snooze: "darman.inlineSuggest.snooze",
  resume: "darman.inlineSuggest.resume",
};
/** The snooze lengths the menu offers, in minutes. */
export const snoozeChoices = [5, 15, 30, 60];

/** The settings that gate a request, as read from darman.inlineSuggest. */
export type GateSettings = {
  enable: boolean;
  /** languageId → on/off; "*" is the default for the others. */
  languages: Record<string, boolean>;
};

/** The part of a Memento the snooze is kept in. */
export type SnoozeStore = {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
};

/** languageEnabled says whether the languages setting lets languageId have suggestions. */
export function languageEnabled(languages: Record<string, boolean> | undefined, languageId: string): boolean {
  const l = languages ?? {};
  if (typeof l[languageId] === "boolean") {
    return l[languageId];
  }
  return typeof l["*"] === "boolean" ? l["*"] : true;
}

export type GateState = { kind: "on" } | { kind: "off" } | { kind: "snoozed"; until: number };

/**
 * CompletionGate answers whether darman is asked for a suggestion. Off and
 * snoozed stop the suggestions VS Code asks for as you type; an explicit
 * "Trigger Inline Suggestion" (Alt+\) still asks, unless the document's
 * language is turned off.
 */
export class CompletionGate {
  constructor(
    private readonly settings: () => GateSettings,
    private readonly store: SnoozeStore,
    private readonly now: () => number = Date.now,
  ) {}

  state(): GateState {
    if (!this.settings().enable) {
      return { kind: "off" };
    }
    const until = this.store.get<number>(snoozeKey) ?? 0;
    return until > this.now() ? { kind: "snoozed", until } : { kind: "on" };
  }

  /** Whether a request for a document of languageId, triggered so, goes to darman. */
  allows(languageId: string, explicit: boolean): boolean {
    if (!languageEnabled(this.settings().languages, languageId)) {
      return false;
    }
    return explicit || this.state().kind === "on";
  }

  /** Snoozes suggestions for minutes from now; returns when it ends. */
  async snooze(minutes: number): Promise<number> {
    const until = this.now() + Math.round(minutes * 60_000);
    await this.store.update(snoozeKey, until);
    return until;
  }

  async resume(): Promise<void> {
    await this.store.update(snoozeKey, undefined);
  }

  /** Milliseconds until the snooze ends, 0 when not snoozed. */
  snoozeLeft(): number {
    const until = this.store.get<number>(snoozeKey) ?? 0;
    return Math.max(0, until - this.now());
  }
}

function clock(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
}

/** The status-bar item's text and tooltip for a gate state. */
export function completionStatusText(s: GateState, language?: { id: string; enabled: boolean }): { text: string; tooltip: string } {
  const click = "Click to turn them on or off, or to snooze them.";
  switch (s.kind) {
    case "off":
      return { text: "$(circle-slash) Completions", tooltip: `darman inline completions are off. ${click}` };
    case "snoozed":
      return { text: `$(clock) Completions ${clock(s.until)}`, tooltip: `darman inline completions are snoozed until ${clock(s.until)}. ${click}` };
    case "on":
      if (language && !language.enabled) {
        return {
          text: "$(circle-slash) Completions",
          tooltip: `darman inline completions are off for ${language.id} (darman.inlineSuggest.languages). ${click}`,
        };
      }
      return { text: "$(sparkle) Completions", tooltip: `darman inline completions are on. ${click}` };
  }
}

type Middleware = (
  document: vscode.TextDocument,
  position: vscode.Position,
  context: vscode.InlineCompletionContext,
  token: vscode.CancellationToken,
  next: (
    document: vscode.TextDocument,
    position: vscode.Position,
    context: vscode.InlineCompletionContext,
    token: vscode.CancellationToken,
  ) => vscode.ProviderResult<vscode.InlineCompletionItem[] | vscode.InlineCompletionList>,
) => vscode.ProviderResult<vscode.InlineCompletionItem[] | vscode.InlineCompletionList>;

/** A client that may offer inline completions (the LanguageClient's part read here). */
export type CompletionClient = {
  initializeResult?: { capabilities: { inlineCompletionProvider?: unknown } };
  getFeature?(method: "textDocument/inlineCompletion"): { getState(): unknown } | undefined;
  /**
   * vscode-languageclient's: on a client that is starting or running it
   * starts nothing and returns the start under way, which ends once every
   * feature is initialized.
   */
  start?(): Promise<void>;
  isRunning?(): boolean;
};

/**
 * available says whether darman's inline completions are registered with
 * VS Code, statically or by a registration. The client's inline
 * completion feature says so; a client without one (the unit tests')
 * answers from initialize's capabilities.
 */
export function available(c: CompletionClient | undefined): boolean {
  if (!c) {
    return false;
  }
  const feature = c.getFeature?.("textDocument/inlineCompletion");
  if (!feature) {
    return Boolean(c.initializeResult?.capabilities.inlineCompletionProvider);
  }
  return (feature.getState() as { registrations?: boolean } | undefined)?.registrations === true;
}

/**
 * InlineCompletions wires the gate to VS Code: the language client's
 * middleware, the status-bar item (shown while darman offers completions),
 * the commands, and the timer that ends a snooze.
 */
export class InlineCompletions implements vscode.Disposable {
  readonly gate: CompletionGate;
  readonly item: vscode.StatusBarItem;
  private client: CompletionClient | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    store: SnoozeStore,
    private readonly now: () => number = Date.now,
  ) {
    this.gate = new CompletionGate(() => this.settings(), store, now);
    this.item = vscode.window.createStatusBarItem("darman.inlineSuggest", vscode.StatusBarAlignment.Right, 99);
    this.item.name = "darman inline completions";
    this.item.command = commandIds.menu;
    this.disposables.push(
      this.item,
      vscode.commands.registerCommand(commandIds.menu, () => this.menu()),
      vscode.commands.registerCommand(commandIds.toggle, () => this.setEnabled(this.gate.state().kind === "off")),
      vscode.commands.registerCommand(commandIds.snooze, (minutes?: unknown) => this.snooze(typeof minutes === "number" && minutes > 0 ? minutes : 5)),
      vscode.commands.registerCommand(commandIds.resume, () => this.resume()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`darman.${settingsSection}`)) {
          this.refresh();
        }
      }),
      vscode.window.onDidChangeActiveTextEditor(() => this.refresh()),
    );
    this.armTimer();
    this.refresh();
  }

  settings(): GateSettings {
    const c = vscode.workspace.getConfiguration(`darman.${settingsSection}`);
    return { enable: c.get<boolean>("enable", true) !== false, languages: c.get<Record<string, boolean>>("languages", {}) ?? {} };
  }

  /** The language client's middleware.provideInlineCompletionItems. */
  readonly middleware: Middleware = (document, position, context, token, next) => {
    const explicit = context.triggerKind === vscode.InlineCompletionTriggerKind.Invoke;
    if (token.isCancellationRequested || !this.gate.allows(document.languageId, explicit)) {
      return null;
    }
    return next(document, position, context, token);
  };

  /**
   * Call when the client is running (or stopped: undefined). The client
   * says it runs as soon as initialize is answered, before it registers
   * its features: the item shows once the start has ended, when the
   * provider is registered, since a keystroke before that asks nobody
   * (VS Code does not ask a provider registered after the keystroke).
   */
  setClient(c: CompletionClient | undefined): void {
    this.client = c;
    this.refresh();
    if (c?.start && c.isRunning?.()) {
      c.start().then(
        () => this.client === c && this.refresh(),
        () => undefined,
      );
    }
  }

  refresh(): void {
    if (!available(this.client)) {
      this.item.hide();
      return;
    }
    const doc = vscode.window.activeTextEditor?.document;
    const lang = doc ? { id: doc.languageId, enabled: languageEnabled(this.settings().languages, doc.languageId) } : undefined;
    const t = completionStatusText(this.gate.state(), lang);
    this.item.text = t.text;
    this.item.tooltip = t.tooltip;
    this.item.show();
  }

  async setEnabled(on: boolean): Promise<void> {
    await vscode.workspace.getConfiguration("darman").update(`${settingsSection}.enable`, on, vscode.ConfigurationTarget.Global);
    if (on) {
      await this.gate.resume();
    } else {
      this.hideShown();
    }
    this.armTimer();
    this.refresh();
  }

  async snooze(minutes: number): Promise<void> {
    await this.gate.snooze(minutes);
    this.hideShown();
    this.armTimer();
    this.refresh();
  }

  async resume(): Promise<void> {
    await this.gate.resume();
    this.armTimer();
    this.refresh();
  }

  /** The status-bar item's menu. */
  async menu(): Promise<void> {
    const s = this.gate.state();
    type Pick = { label: string; run: () => Promise<void> };
    const picks: Pick[] = [];
    if (s.kind === "off") {
      picks.push({ label: "Turn inline completions on", run: () => this.setEnabled(true) });
    } else {
      if (s.kind === "snoozed") {
        picks.push({ label: "Resume inline completions now", run: () => this.resume() });
      }
      for (const m of snoozeChoices) {
        picks.push({ label: `Snooze for ${m < 60 ? `${m} minutes` : `${m / 60} hour`}`, run: () => this.snooze(m) });
      }
      picks.push({ label: "Turn inline completions off", run: () => this.setEnabled(false) });
    }
    const title = completionStatusText(s).tooltip.split(". ")[0];
    const choice = await vscode.window.showQuickPick(picks, { title, placeHolder: "darman inline completions" });
    await choice?.run();
  }

  /** Hides the ghost text on screen, if any. */
  private hideShown(): void {
    void Promise.resolve(vscode.commands.executeCommand("editor.action.inlineSuggest.hide")).catch(() => undefined);
  }

  /** Ends a snooze on time: the status bar says so, and suggestions come back. */
  private armTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const left = this.gate.snoozeLeft();
    if (left > 0) {
      this.timer = setTimeout(() => {
        void this.gate.resume().then(() => this.refresh());
      }, left + 50);
    }
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
