// darman for VS Code: starts `darman lsp`, hosts the chat panel and wires
// the editor to it. The agent is the Go binary; this is its front end.

import * as vscode from "vscode";
import * as fs from "node:fs";
// Only types at the top: vscode-languageclient is most of the code, and
// start() loads it (dist/lsp.js) after activate() returns, so activation
// stays short.
import type { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";
import type { AgentInfo, ModelInfo } from "../shared/protocol";
import { findDarman, NotFoundError } from "./binary";
import { ChatController, errorText } from "./chat";
import { configurationAnswer, DarmanOptIns } from "./client";
import { InlineCompletions } from "./completion";
import { chipFor, fixProblemsPrompt } from "./context";
import { DiffContent, diffScheme, proposedScheme } from "./diff";
import { applyEditAndSave } from "./edits";
import { answerElicit, type ElicitRequest } from "./elicit";
import { ChatViewProvider, viewId } from "./panel";
import { serverSettings, SettingsSync } from "./settings";
import { StatusBar } from "./status";
import { watchTerminals } from "./terminal";
import { followTrustGrant, initializationOptions } from "./trust";

export const installDocs = "https://github.com/darman-dev/darman#quick-start";

let client: LanguageClient | undefined;

/**
 * mark records a timing in the output channel and, when
 * DARMAN_EXTENSION_MARKS names a file, as a JSON line there (the end-to-end
 * test reads activation and first-paint times from it).
 */
function marker(output: vscode.OutputChannel, since: number) {
  return (name: string) => {
    const ms = Math.round((performance.now() - since) * 10) / 10;
    output.appendLine(`[marks] ${name}: ${ms} ms`);
    const file = process.env.DARMAN_EXTENSION_MARKS;
    if (file) {
      fs.appendFileSync(file, JSON.stringify({ name, ms }) + "\n");
    }
  };
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const activateStart = performance.now();
  const { __darmanLoadStart: loadStart = activateStart, __darmanLoadEnd: loadEnd = activateStart } = globalThis as {
    __darmanLoadStart?: number;
    __darmanLoadEnd?: number;
  };
  const t0 = activateStart;
  const output = vscode.window.createOutputChannel("darman", { log: true });
  const mark = marker(output, t0);
  const config = () => vscode.workspace.getConfiguration("darman");
  const diffs = new DiffContent();
  const status = new StatusBar(`${viewId}.focus`);
  const completions = new InlineCompletions(context.globalState);
  let panelResolved = 0;
  // The view provider is made after the controller it serves: these reach it.
  let provider: ChatViewProvider | undefined;
  const reveal = () => void vscode.commands.executeCommand(`${viewId}.focus`);

  const chat = new ChatController({
    server: {
      executeCommand: async (command, argument) => {
        if (!client || !client.isRunning()) {
          throw new Error("darman is not running; see the darman output channel, or run \"darman: Restart the server\"");
        }
        return client.sendRequest("workspace/executeCommand", { command, arguments: argument ? [argument] : [] });
      },
    },
    memento: context.workspaceState,
    diffs,
    configuredModel: () => config().get<string>("model", ""),
    openProposedDiff: () => config().get<boolean>("openProposedDiff", true),
    reveal,
    onState: (s) => {
      status.show(s);
      provider?.showState(s);
    },
    onQuestion: (r) => provider?.notify(r, reveal),
    log: (line) => output.appendLine(line),
  });

  provider = new ChatViewProvider(context.extensionUri, chat, () => {
    if (panelResolved > 0) {
      mark("panelFirstPaint");
      const ms = Math.round((performance.now() - panelResolved) * 10) / 10;
      output.appendLine(`[marks] panel: ${ms} ms from resolving the view to the webview's first message`);
      panelResolved = 0;
    }
  });
  context.subscriptions.push(
    output,
    status,
    completions,
    vscode.workspace.registerTextDocumentContentProvider(diffScheme, diffs),
    vscode.workspace.registerTextDocumentContentProvider(proposedScheme, diffs),
    vscode.window.registerWebviewViewProvider(
      viewId,
      {
        resolveWebviewView: (view, ctx, token) => {
          panelResolved = performance.now();
          mark("panelResolved");
          provider?.resolveWebviewView(view);
        },
      },
      { webviewOptions: { retainContextWhenHidden: false } },
    ),
  );

  // Context chips follow the active editor and its selection.
  let chipTimer: NodeJS.Timeout | undefined;
  const offer = () => {
    clearTimeout(chipTimer);
    chipTimer = setTimeout(() => chat.offerContext(chipFor(vscode.window.activeTextEditor)), 150);
  };
  context.subscriptions.push(
    vscode.window.onDidChangeActiveTextEditor(offer),
    vscode.window.onDidChangeTextEditorSelection(offer),
    { dispose: () => clearTimeout(chipTimer) },
  );
  chat.offerContext(chipFor(vscode.window.activeTextEditor));
  // The terminals' last commands, for @terminal.
  context.subscriptions.push(watchTerminals((line) => output.appendLine(line)));

  let onConfig: vscode.Disposable | undefined;
  context.subscriptions.push({ dispose: () => onConfig?.dispose() });
  // A later grant of Workspace Trust reaches the running server.
  context.subscriptions.push(followTrustGrant(() => client, (err) => output.appendLine(`darman.trust: ${errorText(err)}`)));
  const start = async () => {
    // dist/lsp.js beside this bundle (esbuild.mjs builds both).
    const { CancellationToken, DidChangeConfigurationNotification, LanguageClient, State, Trace, TransportKind } =
      require("./lsp.js") as typeof import("./lsp");
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    let bin: string;
    try {
      const found = findDarman({
        configured: config().get<string>("path", ""),
        workspaceFolder: folder,
        extensionPath: context.extensionPath,
        envPath: process.env.PATH ?? "",
      });
      bin = found.path;
      output.appendLine(`darman: ${bin} (${found.source === "setting" ? "darman.path" : found.source})`);
    } catch (err) {
      const message = errorText(err);
      output.appendLine(message);
      if (err instanceof NotFoundError) {
        output.appendLine(`searched: ${err.searched.join(", ")}`);
      }
      chat.serverFailed(message, { label: "How to install darman", command: "darman.openInstallDocs" });
      void vscode.window.showErrorMessage(message, "Install darman", "Open settings").then((choice) => {
        if (choice === "Install darman") {
          void vscode.env.openExternal(vscode.Uri.parse(installDocs));
        } else if (choice === "Open settings") {
          void vscode.commands.executeCommand("workbench.action.openSettings", "darman.path");
        }
      });
      return;
    }
    const serverOptions: ServerOptions = {
      command: bin,
      args: ["lsp"],
      transport: TransportKind.stdio,
      options: folder ? { cwd: folder } : undefined,
    };
    const settings = new SettingsSync(
      () => serverSettings(config()),
      (darman) => void client?.sendNotification(DidChangeConfigurationNotification.type, { settings: { darman } }),
    );
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file" }],
      outputChannel: output,
      initializationOptions: () => initializationOptions(settings.initial()),
      middleware: {
        provideInlineCompletionItems: completions.middleware,
        workspace: {
          handleApplyEdit: (params, next) => applyEditAndSave(params, (p) => next(p, CancellationToken.None)),
          configuration: (params, token, next) => {
            const other = next(params, token);
            return Promise.resolve(other).then((answers) => {
              const list = Array.isArray(answers) ? answers : [];
              return configurationAnswer(params.items, () => serverSettings(config()), (i) => list[i] ?? null);
            });
          },
        },
      },
    };
    const c = new LanguageClient("darman", "darman", serverOptions, clientOptions);
    c.registerFeature(new DarmanOptIns());
    c.onNotification("darman/sessionUpdate", (p) => chat.sessionUpdate(p));
    c.onNotification("darman/agentsChanged", (p: { agents?: AgentInfo[] }) => chat.agentsChanged(p?.agents));
    c.onNotification("darman/openDiff", (p) => void chat.openDiff(p).catch((err) => output.appendLine(`openDiff: ${errorText(err)}`)));
    c.onRequest("darman/requestPermission", (p, token) => chat.requestPermission(p, token));
    c.onRequest("darman/elicit", (p: ElicitRequest, token) => answerElicit(p, token));
    c.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        const exp = (c.initializeResult?.capabilities.experimental as { darman?: { models?: ModelInfo[]; model?: string; agents?: AgentInfo[] } } | undefined)?.darman ?? {};
        void chat.serverStarted(exp);
        completions.setClient(c);
      } else if (e.newState === State.Stopped && client === c) {
        completions.setClient(undefined);
        chat.serverFailed("darman stopped. Its log is in the darman output channel.", { label: "Restart darman", command: "darman.restart" });
      }
    });
    client = c;
    // Settings go to the server as they change, when what it gets changed.
    onConfig?.dispose();
    onConfig = vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration("darman") || client !== c) {
        return;
      }
      if (e.affectsConfiguration("darman.trace.server")) {
        void c.setTrace(Trace.fromString(config().get<string>("trace.server", "off")));
      }
      if (c.isRunning()) {
        settings.changed();
      }
      chat.modelSettingChanged();
    });
    try {
      await c.start();
      mark("serverStarted");
    } catch (err) {
      const message = `darman lsp could not start: ${errorText(err)}`;
      output.appendLine(message);
      chat.serverFailed(message, { label: "Show the log", command: "darman.showOutput" });
    }
  };

  const restart = async () => {
    const old = client;
    client = undefined;
    completions.setClient(undefined);
    if (old) {
      await old.stop().catch(() => undefined);
    }
    await start();
  };

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("darman.path")) {
        void restart();
      }
    }),
    vscode.commands.registerCommand("darman.askAboutSelection", async () => {
      const editor = vscode.window.activeTextEditor;
      const chip = chipFor(editor);
      if (!chip) {
        void vscode.window.showInformationMessage("darman: open a file and select the code to ask about.");
        return;
      }
      const question = await vscode.window.showInputBox({
        title: `Ask darman about ${chip.label}`,
        prompt: "Your question; the selection goes with it as context.",
        placeHolder: "What does this do?",
      });
      if (question && question.trim() !== "") {
        await chat.promptFromEditor(question, chip);
      }
    }),
    vscode.commands.registerCommand("darman.fixProblems", async () => {
      const editor = vscode.window.activeTextEditor;
      const chip = chipFor(editor);
      if (!editor || !chip) {
        void vscode.window.showInformationMessage("darman: open the file whose problems darman should fix.");
        return;
      }
      const file = vscode.workspace.asRelativePath(editor.document.uri);
      const prompt = fixProblemsPrompt(file, vscode.languages.getDiagnostics(editor.document.uri));
      if (!prompt) {
        void vscode.window.showInformationMessage(`darman: ${file} has no errors or warnings.`);
        return;
      }
      await chat.promptFromEditor(prompt, { uri: chip.uri, label: chip.label.split(":")[0] });
    }),
    vscode.commands.registerCommand("darman.newSession", () => chat.newSession()),
    vscode.commands.registerCommand("darman.focusChat", () => chat.focusPrompt()),
    vscode.commands.registerCommand("darman.revertLastTurn", () => chat.revertFromPalette(false)),
    vscode.commands.registerCommand("darman.redo", () => chat.revertFromPalette(true)),
    vscode.commands.registerCommand("darman.showOutput", () => output.show(true)),
    vscode.commands.registerCommand("darman.restart", restart),
    vscode.commands.registerCommand("darman.openInstallDocs", () => vscode.env.openExternal(vscode.Uri.parse(installDocs))),
  );

  // Our share of activation: evaluating the bundle, then activate() itself
  // (VS Code's own work between the two is not ours).
  const loadMs = loadEnd - loadStart;
  const activateMs = performance.now() - activateStart;
  output.appendLine(`[marks] bundle evaluated in ${loadMs.toFixed(1)} ms, activate() took ${activateMs.toFixed(1)} ms`);
  if (process.env.DARMAN_EXTENSION_MARKS) {
    fs.appendFileSync(process.env.DARMAN_EXTENSION_MARKS, JSON.stringify({ name: "bundleEvaluated", ms: loadMs }) + "\n");
    fs.appendFileSync(process.env.DARMAN_EXTENSION_MARKS, JSON.stringify({ name: "activateBody", ms: activateMs }) + "\n");
  }
  mark("activated");
  // The server starts after activation returns: VS Code waits for nothing.
  void start();
}

export async function deactivate(): Promise<void> {
  const c = client;
  client = undefined;
  await c?.stop();
}
