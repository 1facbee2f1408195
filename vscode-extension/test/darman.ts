// Runs the real darman lsp for the unit tests: builds darman and the
// scripted model server with `go build`, starts the model on a script,
// writes a workspace whose darman.json points at it, and connects to
// darman lsp over stdio with vscode-jsonrpc (the library inside
// vscode-languageclient), declaring the same opt-ins as the extension.

import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as readline from "node:readline";
import { pathToFileURL } from "node:url";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from "vscode-jsonrpc/node";
import { DarmanOptIns } from "../src/client";
import { ChatController } from "../src/chat";
import { DiffContent } from "../src/diff";
import type { HostMessage, PermissionRequest } from "../shared/protocol";
import { applyEditAndSave } from "../src/edits";
import { vscodeApplies } from "./applies";
import { MemoryMemento } from "./stub/vscode";

const repo = path.resolve(__dirname, "..", "..");
let built: string | undefined;

/** Builds bin/darman and bin/scripted-model once per test process; undefined without Go. */
export function buildDarman(): string | undefined {
  if (built) {
    return built;
  }
  if (process.env.DARMAN_TEST_BIN) {
    // A directory that already holds darman and scripted-model.
    built = process.env.DARMAN_TEST_BIN;
    return built;
  }
  try {
    execFileSync("go", ["version"], { stdio: "ignore" });
  } catch {
    return undefined;
  }
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "darman-vscode-bin-"));
  // 125 MB of binaries a test process must not leave behind.
  process.once("exit", () => fs.rmSync(out, { recursive: true, force: true }));
  execFileSync("go", ["build", "-o", out, "./cmd/darman", "./cmd/scripted-model"], { cwd: repo, stdio: ["ignore", "inherit", "inherit"] });
  built = out;
  return out;
}

export type Darman = {
  connection: MessageConnection;
  workspace: string;
  modelURL: string;
  initializeResult: { capabilities: { experimental?: { darman?: Record<string, unknown> } } };
  /** The model calls the scripted server received (GET /llmtest/calls). */
  calls(): Promise<{ body?: unknown }[]>;
  stop(): Promise<void>;
};

/** Starts the scripted model and darman lsp in a fresh workspace holding `files`; `models` changes the catalog's entries (`{"claude-sonnet-4-5": {images: false}}`). */
export async function startDarman(bin: string, script: object, files: Record<string, string>, models?: Record<string, object>): Promise<Darman> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "darman-vscode-home-"));
  const workspace = path.join(home, "project");
  fs.mkdirSync(workspace);
  for (const [name, text] of Object.entries(files)) {
    fs.writeFileSync(path.join(workspace, name), text);
  }
  const scriptFile = path.join(home, "script.json");
  fs.writeFileSync(scriptFile, JSON.stringify(script));
  const model = spawn(path.join(bin, "scripted-model"), ["-stdin-eof-exit", scriptFile]);
  const modelURL = await new Promise<string>((resolve, reject) => {
    const rl = readline.createInterface({ input: model.stdout });
    rl.once("line", (l) => resolve(l.trim()));
    model.once("exit", (code) => reject(new Error(`scripted-model exited with ${code}`)));
  });
  fs.writeFileSync(
    path.join(workspace, "darman.json"),
    JSON.stringify({
      model: "anthropic/claude-sonnet-4-5",
      provider: { anthropic: { baseURL: modelURL, apiKey: "sk-ant-test-0123456789", ...(models ? { models } : {}) } },
      retry: { maxAttempts: 1 },
    }),
  );
  const env = {
    HOME: home,
    PATH: process.env.PATH ?? "",
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    XDG_STATE_HOME: path.join(home, ".local", "state"),
  };
  const proc: ChildProcessWithoutNullStreams = spawn(path.join(bin, "darman"), ["lsp", "--stdio"], { cwd: workspace, env });
  let stderr = "";
  proc.stderr.on("data", (d) => (stderr += d));
  const connection = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
  // What VS Code answers to darman's other requests.
  connection.onRequest("window/workDoneProgress/create", () => null);
  connection.onRequest("client/registerCapability", () => null);
  connection.onRequest("window/showDocument", () => ({ success: true }));
  connection.onRequest("window/showMessageRequest", () => null);
  connection.onRequest("workspace/configuration", (p: { items: unknown[] }) => p.items.map(() => null));
  connection.onNotification("window/logMessage", () => {});
  connection.onNotification("window/showMessage", () => {});
  connection.listen();
  const capabilities: Record<string, unknown> = {
    workspace: { applyEdit: true, workspaceEdit: { documentChanges: true }, configuration: true },
    window: { workDoneProgress: true, showDocument: { support: true } },
  };
  new DarmanOptIns().fillClientCapabilities(capabilities as never);
  const initializeResult = (await connection.sendRequest("initialize", {
    processId: process.pid,
    clientInfo: { name: "Visual Studio Code (unit test)", version: "1.91.0" },
    rootUri: pathToFileURL(workspace).href,
    workspaceFolders: [{ uri: pathToFileURL(workspace).href, name: "project" }],
    capabilities,
    // As the extension sends it in a folder VS Code trusts (src/trust.ts).
    initializationOptions: { darman: {}, workspaceTrusted: true },
  })) as Darman["initializeResult"];
  await connection.sendNotification("initialized", {});
  return {
    connection,
    workspace,
    modelURL,
    initializeResult,
    calls: async () => (await fetch(`${modelURL}/llmtest/calls`)).json() as Promise<{ body?: unknown }[]>,
    stop: async () => {
      await connection.sendRequest("shutdown").catch(() => undefined);
      await connection.sendNotification("exit").catch(() => undefined);
      const exited = new Promise((r) => proc.once("exit", r));
      if (proc.exitCode === null) {
        await exited;
      }
      connection.dispose();
      const modelExited = new Promise((r) => model.once("exit", r));
      model.stdin.end();
      if (model.exitCode === null) {
        await modelExited;
      }
      fs.rmSync(home, { recursive: true, force: true, maxRetries: 3 });
      if (proc.exitCode !== 0) {
        throw new Error(`darman lsp exited with ${proc.exitCode}; stderr:\n${stderr}`);
      }
    },
  };
}

/** What a test's panel may have beyond the plain one: the diff editor's contents, the darman.openProposedDiff setting, and whether it answers darman's permission questions and applies its edits (saved, as the extension does). */
export type PanelOptions = { diffs?: DiffContent; openProposedDiff?: () => boolean; edits?: boolean };

/** A panel's host side on darman: the chat controller sending its commands to darman, hearing its session updates, ready as after the webview loaded; posted collects what it sends the webview. */
export async function openPanel(darman: Darman, o: PanelOptions = {}): Promise<{ chat: ChatController; posted: HostMessage[] }> {
  const c = darman.connection;
  const posted: HostMessage[] = [];
  const chat = new ChatController({
    server: { executeCommand: (command, argument) => c.sendRequest("workspace/executeCommand", { command, arguments: argument ? [argument] : [] }) },
    memento: new MemoryMemento() as never,
    diffs: o.diffs ?? new DiffContent(),
    configuredModel: () => "",
    openProposedDiff: o.openProposedDiff,
    reveal: () => {},
    onState: () => {},
  });
  c.onNotification("darman/sessionUpdate", (p) => chat.sessionUpdate(p));
  if (o.edits) {
    c.onRequest("darman/requestPermission", (p: PermissionRequest, token) => chat.requestPermission(p, token as never));
    c.onRequest("workspace/applyEdit", (p) => applyEditAndSave(p, vscodeApplies as never));
  }
  chat.attach({ post: (m) => posted.push(m) });
  await chat.handle({ type: "webviewReady" });
  await chat.serverStarted(darman.initializeResult.capabilities.experimental?.darman ?? {});
  return { chat, posted };
}
