// The chat routing against the real darman lsp: the webview's messages go
// through ChatController to darman's commands, darman's notifications and
// requests come back to the webview, permissions are answered from the
// panel, and darman's edits are applied and saved the way VS Code does it.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import * as vscode from "./stub/vscode";
import { record, testing, MemoryMemento } from "./stub/vscode";
import { ChatController, type ChatState } from "../src/chat";
import { DiffContent } from "../src/diff";
import { applyEditAndSave } from "../src/edits";
import type { HostMessage, PermissionRequest } from "../shared/protocol";
import { buildDarman, startDarman, type Darman } from "./darman";
import { until, vscodeApplies } from "./applies";

const brokenMain = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println(undefinedGreeting)\n}\n';
const args = (v: object) => v;
const script = {
  conversations: [
    {
      match: "Fix main.go",
      steps: [
        { toolCalls: [{ name: "read", arguments: args({ path: "main.go" }) }] },
        { toolCalls: [{ name: "edit", arguments: args({ path: "main.go", oldString: "undefinedGreeting", newString: '"hello from darman"' }) }] },
        { text: "main.go prints a greeting now.", usage: { input: 120, output: 9 } },
      ],
    },
    {
      match: "Rename the greeting",
      steps: [
        { toolCalls: [{ name: "read", arguments: args({ path: "main.go" }) }] },
        { toolCalls: [{ name: "edit", arguments: args({ path: "main.go", oldString: "fmt.Println", newString: "println" }) }] },
        { text: "Left it as it was." },
      ],
    },
    { match: "Explain this file", steps: [{ text: "It prints a greeting." }] },
    { match: "What do the attached say", steps: [{ text: "Read them." }] },
    { match: "Wait for ever", steps: [{ text: "never sent", faults: [{ kind: "stall", times: -1 }] }] },
    // /compact's summary request (its instruction is the first user message), then the turn after it.
    { match: "Summarize the conversation above", steps: [{ text: "SUMMARY-MARK: the user's word is zebra." }] },
    { match: "Remember the word zebra", steps: [{ text: "Remembered." }, { text: "It was zebra." }] },
    { match: "SUMMARY-MARK", steps: [{ text: "It was zebra." }] },
  ],
};

let darman: Darman | undefined;
let skip: string | false = false;
const posted: HostMessage[] = [];
const states: ChatState[] = [];
let chat: ChatController;
const diffs = new DiffContent();

before(async () => {
  testing.reset();
  const bin = buildDarman();
  if (!bin) {
    skip = "go is not installed (make deps installs the toolchain the tests need)";
    return;
  }
  darman = await startDarman(bin, script, { "main.go": brokenMain, "go.mod": "module example.com/hello\n\ngo 1.22\n" });
  const c = darman.connection;
  chat = new ChatController({
    server: { executeCommand: (command, argument) => c.sendRequest("workspace/executeCommand", { command, arguments: argument ? [argument] : [] }) },
    memento: new MemoryMemento() as never,
    diffs,
    configuredModel: () => "",
    reveal: () => {},
    onState: (s) => states.push(s),
  });
  c.onNotification("darman/sessionUpdate", (p) => chat.sessionUpdate(p));
  c.onRequest("darman/requestPermission", (p: PermissionRequest, token) => chat.requestPermission(p, token as never));
  c.onNotification("darman/openDiff", (p) => void chat.openDiff(p));
  c.onRequest("workspace/applyEdit", (p) => applyEditAndSave(p, vscodeApplies as never));
  chat.attach({ post: (m) => posted.push(m) });
  await chat.serverStarted(darman.initializeResult.capabilities.experimental?.darman ?? {});
});

after(async () => {
  await darman?.stop();
});

function last<T extends HostMessage["type"]>(type: T): Extract<HostMessage, { type: T }> | undefined {
  return posted.findLast((m) => m.type === type) as Extract<HostMessage, { type: T }> | undefined;
}

test("the webview gets the models, the model in use and the sessions when it loads", async (t) => {
  if (skip) return t.skip(skip);
  posted.length = 0;
  await chat.handle({ type: "webviewReady" });
  const ready = last("ready");
  assert.ok(ready, "ready was posted");
  assert.equal(ready.model, "anthropic/claude-sonnet-4-5");
  assert.ok(Array.isArray(ready.models) && Array.isArray(ready.commands));
  assert.deepEqual(last("sessions"), { type: "sessions", sessions: [], current: undefined });
});

test("a prompt from the panel runs a turn whose edit is approved in the panel, applied, saved and shown as a diff", async (t) => {
  if (skip) return t.skip(skip);
  const ws = darman!.workspace;
  const main = path.join(ws, "main.go");
  testing.openEditor(main);
  posted.length = 0;
  const chip = { uri: pathToFileURL(main).href, label: "main.go" };
  await chat.handle({ type: "prompt", text: "Fix main.go so it builds", context: [chip] });
  const sessionId = chat.currentSession;
  assert.ok(sessionId, "the new session became the current one");
  assert.equal(last("sessions")?.sessions[0]?.sessionId, sessionId);

  const card = await until(() => last("permission"), "the permission card");
  assert.equal(card.request.sessionId, sessionId);
  assert.equal(card.request.toolCall.permission, "edit");
  assert.deepEqual(
    card.request.options.map((o) => o.optionId),
    ["allow_once", "allow_always", "reject_once", "reject_always"],
  );
  assert.equal(fs.readFileSync(main, "utf8"), brokenMain, "nothing is written before the answer");
  // The status bar (and the view's badge) say darman waits for the user.
  assert.equal(states.at(-1)?.waiting, 1);
  assert.equal(states.at(-1)?.question, card.request.toolCall.title);
  await chat.handle({ type: "answerPermission", requestId: card.request.requestId, optionId: "allow_once" });
  assert.equal(states.at(-1)?.waiting, 0, "answered: no longer waiting");
  assert.deepEqual(last("permissionClosed"), { type: "permissionClosed", requestId: card.request.requestId });

  await until(
    () => posted.some((m) => m.type === "update" && m.update.sessionUpdate === "state_update" && m.update.state === "idle"),
    "the end of the turn",
  );
  const fixed = brokenMain.replace("undefinedGreeting", '"hello from darman"');
  assert.equal(fs.readFileSync(main, "utf8"), fixed, "the edit is on disk");
  assert.equal(vscode.workspace.textDocuments.find((d) => d.uri.fsPath === main)?.getText(), fixed, "and in the editor");
  assert.ok(record.saved.includes(main), "saved through the editor");

  const kinds = posted.filter((m) => m.type === "update").map((m) => (m.type === "update" ? m.update.sessionUpdate : ""));
  for (const k of ["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk", "usage_update", "state_update"]) {
    assert.ok(kinds.includes(k), `the webview got a ${k}; got ${[...new Set(kinds)].join(", ")}`);
  }
  assert.ok(
    posted.every((m) => m.type !== "update" || m.sessionId === sessionId),
    "only the current session's updates reach the webview",
  );
  // darman/openDiff opened vscode.diff with the old text on the left.
  const diff = await until(() => record.executed.find((e) => e.command === "vscode.diff"), "vscode.diff");
  const [left, right] = diff.args as [vscode.Uri, vscode.Uri];
  assert.equal(right.fsPath, main);
  assert.equal(left.scheme, "darman-before");
  assert.equal(new DiffContent().provideTextDocumentContent(left), "", "another DiffContent has no text for it");
  // A card's "Open diff" before the change is on disk (a permission
  // question) shows the proposed text on the right, not the file twice.
  record.executed.length = 0;
  await chat.handle({ type: "openDiff", uri: vscode.Uri.file(main).toString(), oldText: fixed, newText: fixed + "// proposed\n", title: "edit: main.go" });
  const proposed = await until(() => record.executed.find((e) => e.command === "vscode.diff"), "vscode.diff of a proposal");
  const [pLeft, pRight] = proposed.args as [vscode.Uri, vscode.Uri];
  assert.equal(pRight.scheme, "darman-proposed", "the right side is the proposal");
  assert.equal(diffs.provideTextDocumentContent(pRight), fixed + "// proposed\n");
  assert.equal(diffs.provideTextDocumentContent(pLeft), fixed);
  // The status bar showed the turn running, then stopped spinning.
  assert.ok(states.some((s) => s.running === 1));
  assert.equal(states.at(-1)?.running, 0);
});

test("a rejection with a message reaches the model and leaves the file alone", async (t) => {
  if (skip) return t.skip(skip);
  const main = path.join(darman!.workspace, "main.go");
  const before = fs.readFileSync(main, "utf8");
  posted.length = 0;
  await chat.handle({ type: "newSession" });
  await chat.handle({ type: "prompt", text: "Rename the greeting call", context: [] });
  const card = await until(() => last("permission"), "the permission card");
  await chat.handle({ type: "answerPermission", requestId: card.request.requestId, optionId: "reject_once", message: "keep fmt.Println" });
  await until(() => posted.some((m) => m.type === "update" && m.update.sessionUpdate === "state_update" && m.update.state === "idle"), "the end of the turn");
  assert.equal(fs.readFileSync(main, "utf8"), before);
  const calls = await darman!.calls();
  assert.ok(JSON.stringify(calls.at(-1)).includes("keep fmt.Println"), "the model was told why");
});

test("cancel stops a running turn, and its pending state clears the spinner", async (t) => {
  if (skip) return t.skip(skip);
  posted.length = 0;
  await chat.handle({ type: "newSession" });
  await chat.handle({ type: "prompt", text: "Wait for ever", context: [] });
  const sessionId = chat.currentSession!;
  await until(() => states.at(-1)?.running === 1 && true, "the turn to run");
  await chat.handle({ type: "cancel", sessionId });
  await until(
    () => posted.some((m) => m.type === "update" && m.update.sessionUpdate === "state_update" && m.update.state === "cancelled"),
    "the cancelled state",
  );
  assert.equal(states.at(-1)?.running, 0);
});

test("a turn started outside the panel (a code action) shows in the panel from its first update", async (t) => {
  if (skip) return t.skip(skip);
  posted.length = 0;
  const before = chat.currentSession;
  // What the light bulb's "darman: explain" runs: darman.prompt straight to the server.
  const res = (await darman!.connection.sendRequest("workspace/executeCommand", {
    command: "darman.prompt",
    arguments: [{ prompt: "Explain this file" }],
  })) as { sessionId: string };
  assert.notEqual(res.sessionId, before);
  await until(() => posted.some((m) => m.type === "update" && m.update.sessionUpdate === "state_update" && m.update.state === "idle"), "the end of the turn");
  assert.equal(chat.currentSession, res.sessionId);
  const switched = posted.findIndex((m) => m.type === "session" && m.sessionId === res.sessionId);
  assert.ok(switched >= 0, "the panel switched to the session");
  const updates = posted.slice(switched).flatMap((m) => (m.type === "session" ? m.updates : m.type === "update" ? [m.update] : []));
  const text = updates.map((u) => ("content" in u && u.content && "text" in u.content ? u.content.text : "")).join("");
  assert.ok(text.includes("Explain this file") && text.includes("It prints a greeting."), `the prompt and the answer were streamed: ${text}`);
});

test("sessions: list, load with history, rename, delete", async (t) => {
  if (skip) return t.skip(skip);
  posted.length = 0;
  await chat.handle({ type: "listSessions" });
  const sessions = last("sessions")!.sessions;
  assert.ok(sessions.length >= 4, `four sessions, got ${sessions.length}`);
  const fixed = sessions.find((s) => s.title.includes("Fix main.go")) ?? sessions.at(-1)!;

  await chat.handle({ type: "loadSession", sessionId: fixed.sessionId });
  const loaded = last("session")!;
  assert.equal(loaded.sessionId, fixed.sessionId);
  assert.equal(chat.currentSession, fixed.sessionId);
  const text = JSON.stringify(loaded.updates);
  assert.ok(text.includes("Fix main.go so it builds") && text.includes("main.go prints a greeting now."), "the history has the prompt and the answer");

  posted.length = 0;
  await chat.handle({ type: "renameSession", sessionId: fixed.sessionId, title: "Greeting fix" });
  assert.equal(last("error"), undefined, `rename failed: ${last("error")?.message}`);
  assert.equal(last("sessions")!.sessions.find((s) => s.sessionId === fixed.sessionId)?.title, "Greeting fix");

  await chat.handle({ type: "deleteSession", sessionId: fixed.sessionId });
  assert.equal(last("sessions")!.sessions.find((s) => s.sessionId === fixed.sessionId), undefined);
  assert.equal(chat.currentSession, undefined, "deleting the current session clears the panel");
  assert.equal(last("session")?.sessionId, "");
});

test("/new typed in the panel starts a fresh session and the panel switches to it", async (t) => {
  if (skip) return t.skip(skip);
  posted.length = 0;
  await chat.handle({ type: "prompt", text: "/help", context: [] });
  const before = chat.currentSession!;
  await until(() => posted.some((m) => m.type === "update" && m.update.sessionUpdate === "state_update" && m.update.state === "idle"), "the end of /help");
  posted.length = 0;
  await chat.handle({ type: "prompt", text: "/new", context: [], sessionId: before });
  const shown = await until(() => posted.find((m) => m.type === "session" && m.sessionId !== before), "the new session in the panel");
  assert.equal(last("error"), undefined, `failed: ${last("error")?.message}`);
  assert.ok(shown.type === "session" && shown.sessionId.startsWith("ses_") && shown.updates.length === 0, `an empty new session: ${JSON.stringify(shown)}`);
  assert.equal(chat.currentSession, shown.sessionId, "the new session is the current one (kept across reloads)");
  const list = await until(() => last("sessions")?.sessions.some((s) => s.sessionId === shown.sessionId) && last("sessions"), "the list with the new session");
  assert.equal(list.current, shown.sessionId);
  assert.ok(list.sessions.some((s) => s.sessionId === before), "the old session is kept");
});

test("/compact typed in the panel summarizes: the next prompt sends the model the summary, not the words before", async (t) => {
  if (skip) return t.skip(skip);
  const idle = () => posted.some((m) => m.type === "update" && m.update.sessionUpdate === "state_update" && m.update.state === "idle");
  await chat.handle({ type: "newSession" });
  posted.length = 0;
  await chat.handle({ type: "prompt", text: "Remember the word zebra", context: [] });
  await until(idle, "the end of the first turn");
  const session = chat.currentSession!;
  posted.length = 0;
  await chat.handle({ type: "prompt", text: "/compact", context: [], sessionId: session });
  await until(idle, "the end of /compact");
  assert.equal(last("error"), undefined, `/compact failed: ${last("error")?.message}`);
  const said = posted.flatMap((m) => (m.type === "update" && m.update.sessionUpdate === "agent_message_chunk" ? [(m.update as { content: { text: string } }).content.text] : [])).join("");
  assert.match(said, /is summarized/, `/compact's answer in the panel: ${said}`);
  const user = posted.flatMap((m) => (m.type === "update" && m.update.sessionUpdate === "user_message_chunk" ? [(m.update as { content: { text: string } }).content.text] : [])).join("");
  assert.equal(user, "/compact", "the user's bubble is what was typed");
  posted.length = 0;
  await chat.handle({ type: "prompt", text: "What was the word?", context: [], sessionId: session });
  await until(idle, "the end of the turn after /compact");
  const call = (await darman!.calls()).at(-1) as { body: { messages: { role: string }[] } };
  const body = JSON.stringify(call);
  assert.ok(body.includes("SUMMARY-MARK: the user's word is zebra."), `the summary went to the model: ${body.slice(0, 2000)}`);
  // The conversation before is replaced by the summary (darman keeps the
  // user's last message with it, as written): no earlier answer is sent.
  assert.ok(!body.includes("Remembered."), `the answer before /compact did not: ${body.slice(0, 2000)}`);
  assert.deepEqual(call.body.messages.map((m) => m.role), ["user"], "one user message: the summary and the new prompt");
  assert.ok(body.includes("What was the word?"));
});

test("@ offers the workspace's symbols; a picked symbol sends the model its lines", async (t) => {
  if (skip) return t.skip(skip);
  const main = path.join(darman!.workspace, "main.go");
  // VS Code's workspace symbol search (the language servers'), as it answers for "main".
  const found = vscode.commands.registerCommand("vscode.executeWorkspaceSymbolProvider", (query: unknown) =>
    query === "main" ? [{ name: "main", kind: 11, containerName: "", location: { uri: vscode.Uri.file(main), range: new vscode.Range(4, 0, 6, 1) } }] : [],
  );
  try {
    posted.length = 0;
    await chat.handle({ type: "mentionQuery", id: 7, query: "main" });
    const offered = await until(() => last("mentions"), "the @ list");
    const symbol = offered.items.find((i) => i.kind === "symbol");
    assert.ok(symbol, `a symbol is offered: ${JSON.stringify(offered.items)}`);
    assert.equal(symbol.label, "main");
    assert.match(symbol.detail ?? "", /main\.go:5$/, "where it is, by line");
    await chat.handle({ type: "newSession" });
    posted.length = 0;
    await chat.handle({ type: "prompt", text: "What do the attached say?", context: [{ uri: symbol.uri, label: symbol.label, kind: "symbol", range: symbol.range }] });
    assert.equal(last("error"), undefined, `the prompt failed: ${last("error")?.message}`);
    await until(() => posted.some((m) => m.type === "update" && m.update.sessionUpdate === "state_update" && m.update.state === "idle"), "the end of the turn");
    const body = JSON.stringify((await darman!.calls()).at(-1));
    assert.ok(body.includes("main.go lines 5-7"), `the symbol's lines by number: ${body.slice(0, 2000)}`);
    assert.ok(body.includes("5\\tfunc main() {"), `its first line, numbered: ${body.slice(0, 2000)}`);
    assert.ok(!body.includes("import \\\"fmt\\\""), "not the rest of the file");
  } finally {
    found.dispose();
  }
});

test("listCommands lists darman's built-ins and a command file written since darman started", async (t) => {
  if (skip) return t.skip(skip);
  fs.mkdirSync(path.join(darman!.workspace, ".darman", "command"), { recursive: true });
  fs.writeFileSync(path.join(darman!.workspace, ".darman", "command", "late.md"), "---\ndescription: Written later\n---\nDo the late thing.");
  posted.length = 0;
  await chat.handle({ type: "listCommands" });
  const listed = last("commands");
  assert.ok(listed, "the host answered with the commands");
  const names = listed.commands.map((c) => c.name);
  for (const n of ["new", "clear", "compact", "model", "help", "late"]) assert.ok(names.includes(n), `/${n} is offered: ${names.join(" ")}`);
  assert.equal(listed.commands.find((c) => c.name === "late")?.description, "Written later");
});

test("failures are shown in the panel with what failed", async (t) => {
  if (skip) return t.skip(skip);
  posted.length = 0;
  await chat.handle({ type: "loadSession", sessionId: "no-such-session" });
  assert.match(last("error")?.message ?? "", /^Opening the session failed: .+/);
  await chat.handle({ type: "runCommand", command: "workbench.action.terminal.sendSequence" });
  assert.match(last("error")?.message ?? "", /may not run workbench\.action\.terminal\.sendSequence/);
});

test("insert at cursor, copy and open location act on the editor", async (t) => {
  if (skip) return t.skip(skip);
  const main = path.join(darman!.workspace, "main.go");
  const editor = testing.openEditor(main, [0, 0, 0, 7]);
  await chat.handle({ type: "insertAtCursor", text: "// hi\npackage" });
  assert.ok(editor.document.getText().startsWith("// hi\npackage main"));
  await chat.handle({ type: "copy", text: "fmt.Println" });
  assert.equal(record.clipboard, "fmt.Println");
  const location = { uri: pathToFileURL(main).href, range: { start: { line: 4, character: 0 }, end: { line: 4, character: 4 } } };
  await chat.handle({ type: "openLocation", location });
  assert.equal(record.shown.at(-1)?.uri, pathToFileURL(main).href);
});

test("a removed context chip is not offered again until the selection changes", (t) => {
  if (skip) return t.skip(skip);
  posted.length = 0;
  const a = { uri: "file:///w/a.go", label: "a.go:1-3", range: { start: { line: 0, character: 0 }, end: { line: 2, character: 0 } } };
  chat.offerContext(a);
  void chat.handle({ type: "removeContext", uri: a.uri });
  chat.offerContext(a);
  chat.offerContext({ uri: "file:///w/a.go", label: "a.go" });
  assert.deepEqual(
    posted.filter((m) => m.type === "context").map((m) => (m.type === "context" ? m.chip?.label : "")),
    ["a.go:1-3", "a.go"],
  );
});

test("@file, @selection, @folder and @problems picked in the panel reach the model request", async (t) => {
  if (skip) return t.skip(skip);
  const ws = darman!.workspace;
  const main = path.join(ws, "main.go");
  const uri = pathToFileURL(main).href;
  testing.setDiagnostics(main, [new vscode.Diagnostic(new vscode.Range(5, 13, 5, 30), "undefined: undefinedGreeting", vscode.DiagnosticSeverity.Error)]);
  posted.length = 0;
  await chat.handle({ type: "newSession" });
  await chat.handle({
    type: "prompt",
    text: "What do the attached say?",
    context: [
      { uri, label: "main.go", kind: "file" },
      { uri: pathToFileURL(path.join(ws, "go.mod")).href, label: "go.mod", kind: "selection", range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } } },
      { uri: pathToFileURL(ws).href, label: "project/", kind: "folder" },
      { uri: "darman:problems", label: "problems", kind: "problems" },
    ],
  });
  assert.equal(last("error"), undefined, `the prompt failed: ${last("error")?.message}`);
  await until(() => posted.some((m) => m.type === "update" && m.update.sessionUpdate === "state_update" && m.update.state === "idle"), "the end of the turn");
  const body = JSON.stringify((await darman!.calls()).at(-1));
  const content = fs.readFileSync(main, "utf8");
  assert.ok(body.includes(JSON.stringify(content.trimEnd()).slice(1, -1)), `main.go's text reached the model: ${body.slice(0, 2000)}`);
  assert.ok(body.includes("go.mod lines 1-1"), "the selection, by its lines");
  assert.ok(body.includes("1\\tmodule example.com/hello"), "the selected line, numbered");
  assert.ok(body.includes("the workspace folder:") && body.includes("go.mod\\nmain.go\\n"), "the folder's entries");
  assert.ok(body.includes("Problems:"), "the problems, as the editor has them");
  assert.ok(body.includes("main.go:6:14: error: undefined: undefinedGreeting"), `the problem's line: ${body.slice(0, 3000)}`);
});
