// A stand-in for the `vscode` module in the unit tests (test/build.mjs
// aliases `vscode` to this file). It implements the part of the API the
// extension host uses, in memory, and records what the extension did so the
// tests can assert on it. Documents are real files: save() writes the disk.

import * as fs from "node:fs";
import * as nodePath from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
    readonly query: string,
  ) {}
  static file(p: string): Uri {
    return new Uri("file", p, "");
  }
  static parse(s: string): Uri {
    if (s.startsWith("file:")) {
      return Uri.file(fileURLToPath(s));
    }
    const m = /^([a-z][\w+.-]*):([^?]*)(?:\?(.*))?$/i.exec(s);
    if (!m) {
      throw new Error(`stub Uri.parse: ${s}`);
    }
    return new Uri(m[1], m[2], m[3] ?? "");
  }
  static from(c: { scheme: string; path?: string; query?: string }): Uri {
    return new Uri(c.scheme, c.path ?? "", c.query ?? "");
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, nodePath.posix.join(base.path, ...parts), base.query);
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    if (this.scheme === "file") {
      return pathToFileURL(this.path).href;
    }
    return `${this.scheme}:${this.path}${this.query ? `?${this.query}` : ""}`;
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: number | Position, b: number | Position, c?: number, d?: number) {
    if (typeof a === "number") {
      this.start = new Position(a, b as number);
      this.end = new Position(c!, d!);
    } else {
      this.start = a;
      this.end = b as Position;
    }
  }
  get isEmpty(): boolean {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}

export class Selection extends Range {}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export enum InlineCompletionTriggerKind {
  Invoke = 0,
  Automatic = 1,
}

export enum ConfigurationTarget {
  Global = 1,
  Workspace = 2,
  WorkspaceFolder = 3,
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export enum DiagnosticSeverity {
  Error = 0,
  Warning = 1,
  Information = 2,
  Hint = 3,
}

export class Diagnostic {
  source?: string;
  code?: string | number | { value: string | number; target: Uri };
  constructor(
    readonly range: Range,
    readonly message: string,
    readonly severity: DiagnosticSeverity = DiagnosticSeverity.Error,
  ) {}
}

type Listener<T> = (e: T) => unknown;

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  event = (l: Listener<T>) => {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  };
  fire(e: T): void {
    for (const l of this.listeners) {
      l(e);
    }
  }
}

const languageIds: Record<string, string> = { ".go": "go", ".ts": "typescript", ".py": "python", ".md": "markdown", ".json": "json" };

/** A text document backed by a file: edits change `text`, save() writes it. */
export class TextDocument {
  isDirty = false;
  /** From the file's extension, as VS Code's default language associations. */
  languageId: string;
  /**
   * "fail": save() writes nothing and answers false; "answerFalse": it
   * writes, then answers false; "later": it answers false and writes 50 ms later.
   */
  saveFails: false | "fail" | "answerFalse" | "later" | true = false;
  constructor(
    readonly uri: Uri,
    public text: string,
  ) {
    this.languageId = languageIds[nodePath.extname(uri.path)] ?? "plaintext";
  }
  getText(): string {
    return this.text;
  }
  async save(): Promise<boolean> {
    if (this.saveFails === true || this.saveFails === "fail") {
      return false;
    }
    if (this.saveFails === "later") {
      const text = this.text;
      setTimeout(() => {
        fs.writeFileSync(this.uri.fsPath, text);
        this.isDirty = false;
        didSave.fire(this);
      }, 50);
      return false;
    }
    fs.writeFileSync(this.uri.fsPath, this.text);
    if (this.saveFails === "answerFalse") {
      return false;
    }
    this.isDirty = false;
    record.saved.push(this.uri.fsPath);
    return true;
  }
  offsetAt(p: { line: number; character: number }): number {
    const lines = this.text.split("\n");
    let off = 0;
    for (let i = 0; i < p.line; i++) {
      off += lines[i].length + 1;
    }
    return off + p.character;
  }
  /** Applies an LSP-shaped text edit (what VS Code does for applyEdit). */
  apply(range: { start: { line: number; character: number }; end: { line: number; character: number } }, newText: string): void {
    const a = this.offsetAt(range.start);
    const b = this.offsetAt(range.end);
    this.text = this.text.slice(0, a) + newText + this.text.slice(b);
    this.isDirty = true;
  }
}

/** What the extension did, for the tests to read. */
export const record = {
  posted: [] as unknown[],
  executed: [] as { command: string; args: unknown[] }[],
  shown: [] as { uri: string; options: unknown }[],
  clipboard: "",
  saved: [] as string[],
  messages: [] as { level: string; text: string }[],
  statusItems: [] as StatusBarItemStub[],
  /** The prompts shown (modal messages with buttons, quick picks, input boxes), in order. */
  prompts: [] as Prompt[],
  /** What vscode.env.openExternal was asked to open. */
  opened: [] as string[],
};

/** A prompt the extension showed, and what the scripted user did with it. */
export interface Prompt {
  kind: "message" | "quickPick" | "inputBox";
  text?: string;
  options?: Record<string, unknown>;
  /** A message's buttons, or a quick pick's items' labels. */
  items?: string[];
  /** What validateInput said about each rejected input, in order. */
  invalid?: string[];
}

/**
 * The scripted user's answers, one per prompt, in order: a button title, a
 * quick pick label (or a list of them with canPickMany), or typed text; an
 * input box takes answers until one passes validateInput, as a person
 * retypes. undefined is Escape.
 */
const userAnswers: unknown[] = [];
let openExternalWorks = true;

function nextAnswer(): unknown {
  return userAnswers.shift();
}

export class StatusBarItemStub {
  text = "";
  tooltip: string | undefined;
  command: string | undefined;
  name: string | undefined;
  backgroundColor: ThemeColor | undefined;
  visible = false;
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  dispose(): void {
    this.visible = false;
  }
}

class TextEditor {
  selections: Selection[];
  constructor(
    readonly document: TextDocument,
    public selection: Selection,
  ) {
    this.selections = [selection];
  }
  async edit(cb: (b: { replace(r: Range, text: string): void; insert(p: Position, text: string): void }) => void): Promise<boolean> {
    const ops: [Range, string][] = [];
    cb({ replace: (r, t) => ops.push([r, t]), insert: (p, t) => ops.push([new Range(p, p), t]) });
    for (const [r, t] of ops.reverse()) {
      this.document.apply(r, t);
    }
    return true;
  }
}

const didSave = new EventEmitter<TextDocument>();
const didChangeConfiguration = new EventEmitter<{ affectsConfiguration(section: string): boolean }>();
const commandHandlers = new Map<string, (...args: unknown[]) => unknown>();
const configuration: Record<string, { globalValue?: unknown; workspaceValue?: unknown; defaultValue?: unknown }> = {};
const textDocuments: TextDocument[] = [];
const diagnostics = new Map<string, Diagnostic[]>();

/** A terminal: what was typed into it, and whether it was shown. */
export class TerminalStub {
  sent: { text: string; addNewLine?: boolean }[] = [];
  shown = 0;
  constructor(readonly name: string) {}
  show(): void {
    this.shown++;
  }
  sendText(text: string, addNewLine?: boolean): void {
    this.sent.push({ text, addNewLine });
  }
  dispose(): void {}
}

type ShellExecutionEvent = { terminal: { name: string }; execution: { commandLine: { value: string }; read(): AsyncIterable<string> }; exitCode?: number };
const shellStarted = new EventEmitter<ShellExecutionEvent>();
const shellEnded = new EventEmitter<ShellExecutionEvent>();

export const window = {
  terminals: [] as TerminalStub[],
  createTerminal(o: { name: string }): TerminalStub {
    const t = new TerminalStub(o.name);
    window.terminals.push(t);
    return t;
  },
  activeTextEditor: undefined as TextEditor | undefined,
  visibleTextEditors: [] as TextEditor[],
  createStatusBarItem(): StatusBarItemStub {
    const item = new StatusBarItemStub();
    record.statusItems.push(item);
    return item;
  },
  createOutputChannel(_name: string) {
    const lines: string[] = [];
    return { lines, appendLine: (l: string) => lines.push(l), show() {}, dispose() {} };
  },
  async showTextDocument(uri: Uri, options?: unknown) {
    record.shown.push({ uri: uri.toString(), options });
  },
  async showErrorMessage(text: string) {
    record.messages.push({ level: "error", text });
    return undefined;
  },
  async showInformationMessage(text: string, ...rest: unknown[]) {
    const items = rest.filter((r): r is string => typeof r === "string");
    if (items.length === 0) {
      record.messages.push({ level: "info", text });
      return undefined;
    }
    const options = rest.find((r) => typeof r === "object") as Record<string, unknown> | undefined;
    record.prompts.push({ kind: "message", text, options, items });
    return nextAnswer() as string | undefined;
  },
  async showWarningMessage(text: string) {
    record.messages.push({ level: "warning", text });
    return undefined;
  },
  async showQuickPick<T extends { label: string }>(items: T[], options?: Record<string, unknown>, _token?: unknown) {
    record.prompts.push({ kind: "quickPick", options, items: items.map((i) => i.label) });
    const a = nextAnswer();
    if (a === undefined) {
      return undefined;
    }
    const find = (l: unknown) => {
      const it = items.find((i) => i.label === l);
      if (!it) {
        throw new Error(`stub showQuickPick: no item ${String(l)} in ${items.map((i) => i.label).join(", ")}`);
      }
      return it;
    };
    return Array.isArray(a) ? a.map(find) : find(a);
  },
  async showInputBox(options: { validateInput?: (v: string) => string | undefined | Promise<string | undefined> } & Record<string, unknown>, _token?: unknown) {
    const prompt: Prompt = { kind: "inputBox", options, invalid: [] };
    record.prompts.push(prompt);
    for (;;) {
      const a = nextAnswer();
      if (a === undefined) {
        return undefined;
      }
      const why = await options.validateInput?.(String(a));
      if (!why) {
        return String(a);
      }
      prompt.invalid!.push(why);
    }
  },
  onDidChangeActiveTextEditor: new EventEmitter<unknown>().event,
  onDidChangeTextEditorSelection: new EventEmitter<unknown>().event,
  // VS Code 1.93's shell integration events (testing.runInTerminal fires them).
  onDidStartTerminalShellExecution: shellStarted.event,
  onDidEndTerminalShellExecution: shellEnded.event,
};

const didGrantWorkspaceTrust = new EventEmitter<void>();

export const workspace = {
  isTrusted: true,
  onDidGrantWorkspaceTrust: didGrantWorkspaceTrust.event,
  onDidSaveTextDocument: didSave.event,
  onDidChangeConfiguration: didChangeConfiguration.event,
  workspaceFolders: undefined as { uri: Uri }[] | undefined,
  get textDocuments(): TextDocument[] {
    return textDocuments;
  },
  async openTextDocument(uri: Uri): Promise<TextDocument> {
    let doc = textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (!doc) {
      doc = new TextDocument(uri, fs.readFileSync(uri.fsPath, "utf8"));
      textDocuments.push(doc);
    }
    return doc;
  },
  // No file matches: a test of @ sets up what it offers otherwise.
  async findFiles(_include: string, _exclude?: string, _max?: number): Promise<Uri[]> {
    return [];
  },
  getConfiguration(section: string) {
    const prefix = `${section}.`;
    const obj: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(configuration)) {
      if (k.startsWith(prefix)) {
        obj[k.slice(prefix.length).split(".")[0]] = v.workspaceValue ?? v.globalValue ?? v.defaultValue;
      }
    }
    return Object.assign(obj, {
      get: <T>(key: string, dflt?: T) => {
        const v = configuration[prefix + key];
        return (v?.workspaceValue ?? v?.globalValue ?? v?.defaultValue ?? dflt) as T;
      },
      has: (key: string) => prefix + key in configuration,
      inspect: (key: string) => configuration[prefix + key],
      // A user's change: the value lands in the user settings (or the
      // workspace's), and onDidChangeConfiguration fires.
      update: async (key: string, value: unknown, target?: ConfigurationTarget) => {
        const full = prefix + key;
        const v = (configuration[full] ??= {});
        if (target === ConfigurationTarget.Workspace || target === ConfigurationTarget.WorkspaceFolder) {
          v.workspaceValue = value;
        } else {
          v.globalValue = value;
        }
        didChangeConfiguration.fire({ affectsConfiguration: (s: string) => full === s || full.startsWith(`${s}.`) });
      },
    });
  },
};

export const commands = {
  registerCommand(id: string, fn: (...args: unknown[]) => unknown) {
    commandHandlers.set(id, fn);
    return { dispose: () => commandHandlers.delete(id) };
  },
  async executeCommand(command: string, ...args: unknown[]) {
    record.executed.push({ command, args });
    return commandHandlers.get(command)?.(...args);
  },
};

export const env = {
  clipboard: {
    async writeText(t: string) {
      record.clipboard = t;
    },
  },
  async openExternal(uri: Uri) {
    record.opened.push(uri.toString());
    return openExternalWorks;
  },
};

export const languages = {
  /** A file's diagnostics; without a uri, every file's, as [uri, diagnostics] pairs. */
  getDiagnostics(uri?: Uri): any {
    if (!uri) {
      return [...diagnostics].map(([u, ds]) => [Uri.parse(u), ds]);
    }
    return diagnostics.get(uri.toString()) ?? [];
  },
};

/** A Memento in memory (workspaceState). */
export class MemoryMemento {
  private values = new Map<string, unknown>();
  get<T>(key: string, dflt?: T): T | undefined {
    return (this.values.has(key) ? this.values.get(key) : dflt) as T | undefined;
  }
  keys(): readonly string[] {
    return [...this.values.keys()];
  }
  async update(key: string, value: unknown): Promise<void> {
    if (value === undefined) {
      this.values.delete(key);
    } else {
      this.values.set(key, value);
    }
  }
}

/** Test controls: set the state the extension reads. */
export const testing = {
  /**
   * runInTerminal is a command run in a terminal with shell integration:
   * its start, its output in chunks as the shell writes it (escape
   * sequences and all), then its end with exitCode.
   */
  async runInTerminal(terminal: string, commandLine: string, chunks: string[], exitCode: number): Promise<void> {
    let release!: () => void;
    const ended = new Promise<void>((r) => (release = r));
    const execution = {
      commandLine: { value: commandLine },
      async *read() {
        for (const c of chunks) yield c;
        await ended;
      },
    };
    shellStarted.fire({ terminal: { name: terminal }, execution });
    await new Promise((r) => setTimeout(r, 10));
    shellEnded.fire({ terminal: { name: terminal }, execution, exitCode });
    release();
  },
  reset(): void {
    record.posted.length = 0;
    record.executed.length = 0;
    record.shown.length = 0;
    record.saved.length = 0;
    record.messages.length = 0;
    record.statusItems.length = 0;
    record.clipboard = "";
    record.prompts.length = 0;
    record.opened.length = 0;
    userAnswers.length = 0;
    openExternalWorks = true;
    textDocuments.length = 0;
    diagnostics.clear();
    for (const k of Object.keys(configuration)) {
      delete configuration[k];
    }
    window.activeTextEditor = undefined;
    window.visibleTextEditors = [];
    window.terminals = [];
  },
  /** The user trusts the folder (Workspace Trust): isTrusted turns true. */
  grantTrust(): void {
    workspace.isTrusted = true;
    didGrantWorkspaceTrust.fire();
  },
  /** Scripts the user's next answers to prompts (see userAnswers). */
  answer(...answers: unknown[]): void {
    userAnswers.push(...answers);
  },
  /** Makes vscode.env.openExternal answer false (no browser). */
  openExternalFails(): void {
    openExternalWorks = false;
  },
  setSetting(key: string, value: { globalValue?: unknown; workspaceValue?: unknown; defaultValue?: unknown }): void {
    configuration[key] = value;
  },
  /** Opens a file as an editor with a selection (lines and characters 0-based). */
  openEditor(file: string, sel?: [number, number, number, number]): TextEditor {
    const uri = Uri.file(file);
    let doc = textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (!doc) {
      doc = new TextDocument(uri, fs.readFileSync(file, "utf8"));
      textDocuments.push(doc);
    }
    const s = sel ?? [0, 0, 0, 0];
    const editor = new TextEditor(doc, new Selection(s[0], s[1], s[2], s[3]));
    window.activeTextEditor = editor;
    window.visibleTextEditors = [editor];
    return editor;
  },
  setDiagnostics(file: string, list: Diagnostic[]): void {
    diagnostics.set(Uri.file(file).toString(), list);
  },
};
