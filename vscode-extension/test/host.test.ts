// The host's side of the panel protocol where darman's answers do not
// matter: a server that failed, a question darman withdrew, a panel that
// was hidden and comes back. The Server here records the commands it gets.

import { test } from "node:test";
import assert from "node:assert/strict";
import { MemoryMemento, record, testing } from "./stub/vscode";
import * as vscode from "./stub/vscode";
import { ChatController, type ChatState } from "../src/chat";
import { DiffContent } from "../src/diff";
import { ChatViewProvider, type ChatView } from "../src/panel";
import { StatusBar } from "../src/status";
import type { HostMessage, PermissionRequest } from "../shared/protocol";

function controller(answers: Record<string, unknown> = {}) {
  const commands: { command: string; argument?: object }[] = [];
  const posted: HostMessage[] = [];
  const states: ChatState[] = [];
  let revealed = 0;
  const chat = new ChatController({
    server: {
      executeCommand: async (command, argument) => {
        commands.push({ command, argument });
        if (command in answers) {
          return answers[command];
        }
        throw new Error(`unknown command ${command}`);
      },
    },
    memento: new MemoryMemento() as never,
    diffs: new DiffContent(),
    configuredModel: () => "",
    reveal: () => revealed++,
    onState: (s) => states.push(s),
  });
  chat.attach({ post: (m) => posted.push(m) });
  return { chat, commands, posted, states, revealed: () => revealed };
}

const request: PermissionRequest = {
  sessionId: "s1",
  turnId: "t1",
  requestId: "r1",
  toolCall: { toolCallId: "c1", title: "Edit main.go", permission: "edit", subjects: ["main.go"] },
  options: [
    { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
    { optionId: "reject_once", name: "Reject", kind: "reject_once" },
  ],
};

const history = { sessionId: "s1", title: "Fix", model: "m", state: "idle", updates: [{ sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi" } }] };

test("a server that failed: the panel shows why with the button, open questions are answered cancelled", async () => {
  testing.reset();
  const { chat, posted, states } = controller({ "darman.session.list": { sessions: [] }, "darman.session.load": history });
  await chat.handle({ type: "webviewReady" });
  await chat.handle({ type: "loadSession", sessionId: "s1" });
  const answer = chat.requestPermission(request);
  chat.serverFailed("darman is not installed", { label: "How to install darman", command: "darman.openInstallDocs" });
  assert.deepEqual(await answer, { outcome: { outcome: "cancelled" } });
  assert.deepEqual(posted.at(-1), { type: "serverError", message: "darman is not installed", action: { label: "How to install darman", command: "darman.openInstallDocs" } });
  assert.ok(posted.some((m) => m.type === "permissionClosed" && m.requestId === "r1"));
  assert.equal(states.at(-1)?.error, "darman is not installed");
  // A webview that loads later gets the error, and its button runs the command.
  posted.length = 0;
  await chat.handle({ type: "webviewReady" });
  assert.deepEqual(posted.map((m) => m.type), ["serverError"]);
  await chat.handle({ type: "runCommand", command: "darman.openInstallDocs" });
  assert.equal(record.executed.at(-1)?.command, "darman.openInstallDocs");
});

test("a question darman withdrew (timeout, cancelled turn) drops its card and answers cancelled", async () => {
  const { chat, posted } = controller({ "darman.session.list": { sessions: [] }, "darman.session.load": history });
  await chat.handle({ type: "webviewReady" });
  await chat.handle({ type: "loadSession", sessionId: "s1" });
  let cancel: () => void = () => {};
  const token = { isCancellationRequested: false, onCancellationRequested: (l: () => void) => ((cancel = l), { dispose() {} }) };
  const answer = chat.requestPermission(request, token as never);
  assert.deepEqual(posted.at(-1), { type: "permission", request });
  cancel();
  assert.deepEqual(await answer, { outcome: { outcome: "cancelled" } });
  assert.deepEqual(posted.at(-1), { type: "permissionClosed", requestId: "r1" });
});

test("an answer for a question asked before a reload goes through darman.permission.answer", async () => {
  const { chat, commands } = controller({ "darman.permission.answer": {} });
  await chat.handle({ type: "answerPermission", requestId: "old", optionId: "reject_once", message: "not now" });
  assert.deepEqual(commands.at(-1), { command: "darman.permission.answer", argument: { requestId: "old", optionId: "reject_once", message: "not now" } });
});

test("a panel hidden and shown again gets the current session's history and its open question back", async () => {
  const { chat, posted, revealed } = controller({ "darman.session.list": { sessions: [] }, "darman.session.load": history });
  await chat.handle({ type: "webviewReady" });
  await chat.handle({ type: "loadSession", sessionId: "s1" });
  void chat.requestPermission(request);
  // VS Code disposes a hidden webview (retainContextWhenHidden is off) and resolves a new one.
  chat.detach();
  const again: HostMessage[] = [];
  chat.attach({ post: (m) => again.push(m) });
  await chat.handle({ type: "webviewReady" });
  assert.deepEqual(
    again.map((m) => m.type),
    ["ready", "context", "sessions", "session", "permission"],
  );
  assert.deepEqual(again.find((m) => m.type === "session"), { type: "session", ...history });
  assert.equal(revealed(), 0, "nothing forced the panel open");
  assert.ok(posted.length > 0);
});

test("the panel's agents are the primary ones, follow darman/agentsChanged, and the chosen one goes with the prompt", async () => {
  const { chat, commands, posted } = controller({
    "darman.session.list": { sessions: [] },
    "darman.prompt": { sessionId: "s3", turnId: "t" },
  });
  await chat.serverStarted({
    models: [{ id: "a/one" }],
    model: "a/one",
    agents: [
      { name: "build", mode: "primary" },
      { name: "plan", mode: "primary" },
      { name: "code-reviewer", mode: "subagent" },
    ],
  });
  await chat.handle({ type: "webviewReady" });
  const ready = posted.filter((m) => m.type === "ready").at(-1) as { agents?: { name: string }[] };
  assert.deepEqual(ready.agents?.map((a) => a.name), ["build", "plan"]);
  chat.agentsChanged([{ name: "build", mode: "primary" }, { name: "docs", mode: "all" }]);
  const again = posted.filter((m) => m.type === "ready").at(-1) as { agents?: { name: string }[] };
  assert.deepEqual(again.agents?.map((a) => a.name), ["build", "docs"]);
  await chat.handle({ type: "prompt", text: "plan it", context: [], agent: "plan" });
  assert.equal((commands.find((c) => c.command === "darman.prompt")?.argument as { agent?: string }).agent, "plan");
});

test("the chosen model goes with new sessions and prompts, and survives the panel", async () => {
  const { chat, commands, posted } = controller({
    "darman.session.list": { sessions: [] },
    "darman.session.new": { sessionId: "s2" },
    "darman.prompt": { sessionId: "s2", turnId: "t" },
  });
  await chat.serverStarted({ models: [{ id: "a/one" }, { id: "b/two", name: "Two" }], model: "a/one" });
  await chat.handle({ type: "webviewReady" });
  assert.deepEqual(posted.find((m) => m.type === "ready"), {
    type: "ready",
    models: [{ id: "a/one" }, { id: "b/two", name: "Two" }],
    model: "a/one",
    commands: [],
    agents: [],
  });
  await chat.handle({ type: "setModel", model: "b/two" });
  assert.equal(chat.model, "b/two");
  await chat.handle({ type: "newSession" });
  await chat.handle({ type: "prompt", text: "hi", context: [{ uri: "file:///w/a.go", label: "a.go" }, { uri: "file:///w/b.go", label: "b.go:2-3", range: { start: { line: 1, character: 0 }, end: { line: 2, character: 4 } } }] });
  assert.deepEqual(commands.find((c) => c.command === "darman.session.new")?.argument, { model: "b/two" });
  assert.deepEqual(commands.find((c) => c.command === "darman.prompt")?.argument, {
    prompt: "hi\n\nAlso look at:\n- /w/b.go lines 2-3",
    sessionId: "s2",
    context: { uri: "file:///w/a.go" },
    model: "b/two",
  });
  // darman.command.list is missing on this server: no completions, no error.
  assert.ok(commands.some((c) => c.command === "darman.command.list"));
  assert.equal(posted.filter((m) => m.type === "error").length, 0);
});

test("renaming on a darman without darman.session.rename says to update darman", async () => {
  const { chat, posted } = controller({ "darman.session.list": { sessions: [] } });
  await chat.handle({ type: "webviewReady" });
  await chat.handle({ type: "renameSession", sessionId: "s1", title: "New" });
  assert.deepEqual(posted.at(-1), {
    type: "error",
    message: "Renaming the session failed: this darman cannot rename sessions; update darman to rename them",
  });
});

/** A WebviewView as VS Code hands it to the provider: hidden or shown by the test. */
function fakeView(visible: boolean) {
  const view = {
    visible,
    badge: undefined as { value: number; tooltip: string } | undefined,
    webview: {
      options: {},
      html: "",
      cspSource: "vscode-resource:",
      asWebviewUri: (u: unknown) => u,
      postMessage: async () => true,
      onDidReceiveMessage: () => ({ dispose() {} }),
    },
    onDidDispose: () => ({ dispose() {} }),
  };
  return view;
}

test("a hidden panel with a pending question shows a badge, a waiting status bar and a notification that reveals it; the answer clears them", async () => {
  testing.reset();
  let revealed = 0;
  const status = new StatusBar("darman.chat.focus");
  let provider: ChatViewProvider | undefined;
  const chat = new ChatController({
    server: { executeCommand: async () => ({ sessions: [] }) },
    memento: new MemoryMemento() as never,
    diffs: new DiffContent(),
    configuredModel: () => "m",
    reveal: () => revealed++,
    onState: (s) => (status.show(s), provider?.showState(s)),
    onQuestion: (r) => provider?.notify(r, () => revealed++),
  });
  provider = new ChatViewProvider(vscode.Uri.file("/ext"), chat);
  const view = fakeView(false);
  provider.resolveWebviewView(view as unknown as ChatView);
  assert.equal(view.badge, undefined, "no badge before a question");
  // The user clicks the notification's button.
  testing.answer("Show the question");
  const answer = chat.requestPermission(request);
  assert.deepEqual(view.badge, { value: 1, tooltip: "darman is waiting for you: Edit main.go" });
  assert.equal(status.item.text, "$(bell-dot) darman: waiting for you");
  assert.match(String(status.item.tooltip), /darman asks: Edit main\.go/);
  assert.ok(status.item.backgroundColor, "the status bar item stands out");
  const note = record.prompts.find((p) => p.kind === "message");
  assert.equal(note?.text, "darman is waiting for you: Edit main.go");
  assert.deepEqual(note?.items, ["Show the question"]);
  await new Promise((r) => setImmediate(r));
  assert.equal(revealed, 1, "the button opens the panel");

  await chat.handle({ type: "answerPermission", requestId: "r1", optionId: "allow_once" });
  assert.deepEqual(await answer, { outcome: { outcome: "selected", optionId: "allow_once" } });
  assert.equal(view.badge, undefined, "the badge goes with the answer");
  assert.doesNotMatch(status.item.text, /waiting/);

  // A panel in view shows the card; no notification on top of it.
  view.visible = true;
  record.prompts.length = 0;
  void chat.requestPermission({ ...request, requestId: "r2" });
  assert.equal(view.badge?.value, 1);
  assert.equal(record.prompts.length, 0);
});

test("darman.focusChat shows the panel and puts the caret in its box", async () => {
  const { chat, posted, revealed } = controller({ "darman.session.list": { sessions: [] } });
  const focused = chat.focusPrompt();
  assert.ok(revealed() >= 1, "the panel is shown");
  await chat.handle({ type: "webviewReady" });
  await focused;
  assert.ok(posted.some((m) => m.type === "focusPrompt"), "the webview is told to focus its box");
});

test("Run in terminal types a shell block into darman's terminal, without running it", async () => {
  testing.reset();
  const { chat } = controller();
  await chat.handle({ type: "runInTerminal", text: "go test ./...\ngo vet ./..." });
  await chat.handle({ type: "runInTerminal", text: "make" });
  assert.equal(vscode.window.terminals.length, 1, "one terminal, reused");
  const t = vscode.window.terminals[0];
  assert.equal(t.name, "darman");
  assert.deepEqual(t.sent, [
    { text: "go test ./...\ngo vet ./...", addNewLine: false },
    { text: "make", addNewLine: false },
  ]);
  assert.equal(t.shown, 2);
});
