// The panel's Revert and Redo against the real darman lsp: a turn edits a
// file through the editor, the palette's darman.revertLastTurn previews
// (nothing changes), a user change since the turn is a conflict with
// darman's reason, "Revert anyway" restores the file on disk, and redo puts
// it back. darman's refusals (a running turn, a session with nothing to
// revert) reach the panel as darman said them. Checkpoints need git on PATH.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "./stub/vscode";
import { record, testing, MemoryMemento } from "./stub/vscode";
import { ChatController } from "../src/chat";
import { DiffContent } from "../src/diff";
import { applyEditAndSave } from "../src/edits";
import type { HostMessage, PermissionRequest } from "../shared/protocol";
import { buildDarman, startDarman, type Darman } from "./darman";
import { until, vscodeApplies } from "./applies";

const original = 'package main\n\nfunc main() {\n\tprintln("hi")\n}\n';
const edited = original.replace('"hi"', '"hello from darman"');
const script = {
  conversations: [
    {
      match: "Greet louder",
      steps: [
        { toolCalls: [{ name: "read", arguments: { path: "main.go" } }] },
        { toolCalls: [{ name: "edit", arguments: { path: "main.go", oldString: '"hi"', newString: '"hello from darman"' } }] },
        { text: "Done." },
      ],
    },
    { match: "Wait for ever", steps: [{ text: "never sent", faults: [{ kind: "stall", times: -1 }] }] },
  ],
};

let darman: Darman | undefined;
let skip: string | false = false;
const posted: HostMessage[] = [];
let chat: ChatController;
const diffs = new DiffContent();

function hasGit(): boolean {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

before(async () => {
  testing.reset();
  const bin = buildDarman();
  if (!bin) {
    skip = "go is not installed (make deps installs the toolchain the tests need)";
    return;
  }
  if (!hasGit()) {
    skip = "git is not on PATH: darman's checkpoints need it";
    return;
  }
  darman = await startDarman(bin, script, { "main.go": original, "go.mod": "module example.com/hello\n\ngo 1.22\n" });
  const c = darman.connection;
  chat = new ChatController({
    server: { executeCommand: (command, argument) => c.sendRequest("workspace/executeCommand", { command, arguments: argument ? [argument] : [] }) },
    memento: new MemoryMemento() as never,
    diffs,
    configuredModel: () => "",
    reveal: () => {},
  });
  c.onNotification("darman/sessionUpdate", (p) => chat.sessionUpdate(p));
  c.onRequest("darman/requestPermission", (p: PermissionRequest, token) => chat.requestPermission(p, token as never));
  c.onNotification("darman/openDiff", () => {});
  c.onRequest("workspace/applyEdit", (p) => applyEditAndSave(p, vscodeApplies as never));
  chat.attach({ post: (m) => posted.push(m) });
  await chat.serverStarted(darman.initializeResult.capabilities.experimental?.darman ?? {});
  await chat.handle({ type: "webviewReady" });
});

after(async () => {
  await darman?.stop();
});

/** The next revertReport or revertFailed posted after `from`. */
function answer(from: number): Promise<Extract<HostMessage, { type: "revertReport" | "revertFailed" }>> {
  return until(
    () => posted.slice(from).find((m) => m.type === "revertReport" || m.type === "revertFailed") as Extract<HostMessage, { type: "revertReport" | "revertFailed" }> | undefined,
    "the revert's answer",
  );
}

async function report(from: number) {
  const m = await answer(from);
  assert.equal(m.type, "revertReport", m.type === "revertFailed" ? `darman refused: ${m.message}` : "");
  return m.type === "revertReport" ? m : assert.fail("unreachable");
}

test("a turn's edit is previewed, conflicts are named, Revert anyway restores the file, redo puts it back", async (t) => {
  if (skip) return t.skip(skip);
  const main = path.join(darman!.workspace, "main.go");
  await chat.handle({ type: "prompt", text: "Greet louder", context: [] });
  const card = await until(() => posted.find((m) => m.type === "permission"), "the permission card");
  if (card.type !== "permission") return;
  await chat.handle({ type: "answerPermission", requestId: card.request.requestId, optionId: "allow_once" });
  const end = await until(
    () => posted.find((m) => m.type === "update" && m.update.sessionUpdate === "state_update" && m.update.state === "idle"),
    "the end of the turn",
  );
  assert.equal(fs.readFileSync(main, "utf8"), edited, "the turn edited main.go");
  const sessionId = chat.currentSession!;
  // The live updates carry the turn's id: what the panel's per-turn Revert sends.
  const turnId = end.type === "update" ? end.turnId : undefined;
  assert.match(turnId ?? "", /\S/, "the live updates name their turn");

  // The palette's "Revert the last turn": a preview, nothing changes.
  let from = posted.length;
  await chat.revertFromPalette(false);
  const preview = await report(from);
  assert.deepEqual(preview.request, { sessionId, preview: true });
  assert.equal(preview.report.applied, false);
  assert.deepEqual(preview.report.files, [{ path: "main.go", action: "restore" }]);
  assert.match(preview.report.diff, /-\tprintln\("hello from darman"\)/);
  assert.equal(fs.readFileSync(main, "utf8"), edited, "a preview changes nothing");

  // The panel's "Show diff" opens the combined diff as a document.
  await chat.handle({ type: "openPatch", text: preview.report.diff, title: "darman revert preview" });
  const shown = vscode.Uri.parse(record.shown.at(-1)!.uri);
  assert.equal(shown.scheme, "darman-before");
  assert.equal(diffs.provideTextDocumentContent(shown), preview.report.diff);

  // The user changes main.go (saved in the editor): the per-turn Revert's preview names the conflict.
  const mine = edited.replace("func main", "// mine\nfunc main");
  fs.writeFileSync(main, mine);
  vscode.workspace.textDocuments.find((d) => d.uri.fsPath === main)!.text = mine;
  from = posted.length;
  await chat.handle({ type: "revert", sessionId, turnId, preview: true });
  const conflicted = await report(from);
  assert.equal(conflicted.request.turnId, turnId);
  assert.equal(conflicted.report.conflicts?.[0]?.path, "main.go");
  assert.match(conflicted.report.conflicts?.[0]?.reason ?? "", /\S/, "the conflict says why");
  assert.equal(fs.readFileSync(main, "utf8"), mine);

  // "Revert anyway": force, applied, main.go is what it was before the turn.
  from = posted.length;
  await chat.handle({ type: "revert", sessionId, turnId: conflicted.report.turnId, preview: false, force: true });
  const reverted = await report(from);
  assert.equal(reverted.report.applied, true);
  assert.equal(fs.readFileSync(main, "utf8"), original, "the revert restored main.go on disk");

  // The palette's "Redo": preview, then apply; main.go is back to what the revert took away.
  from = posted.length;
  await chat.revertFromPalette(true);
  const redoPreview = await report(from);
  assert.deepEqual(redoPreview.request, { sessionId, preview: true, redo: true });
  assert.equal(fs.readFileSync(main, "utf8"), original, "a redo preview changes nothing");
  from = posted.length;
  await chat.handle({ type: "revert", sessionId, redo: true, preview: false });
  const redone = await report(from);
  assert.equal(redone.report.applied, true);
  assert.equal(fs.readFileSync(main, "utf8"), mine, "redo put back what the revert took away");
});

test("darman's refusals are shown in the panel: a running turn, nothing to revert", async (t) => {
  if (skip) return t.skip(skip);
  await chat.handle({ type: "newSession" });
  const empty = chat.currentSession!;
  let from = posted.length;
  await chat.revertFromPalette(false);
  const nothing = await answer(from);
  assert.equal(nothing.type, "revertFailed");
  if (nothing.type === "revertFailed") {
    assert.equal(nothing.request.sessionId, empty);
    assert.match(nothing.message, /\S/, "darman's message");
  }

  await chat.handle({ type: "prompt", text: "Wait for ever", context: [] });
  const sessionId = chat.currentSession!;
  await until(() => posted.some((m) => m.type === "update" && m.sessionId === sessionId && m.update.sessionUpdate === "state_update" && m.update.state === "running"), "the turn to run");
  from = posted.length;
  await chat.handle({ type: "revert", sessionId, preview: true });
  const running = await answer(from);
  assert.equal(running.type, "revertFailed");
  if (running.type === "revertFailed") assert.match(running.message, /running a turn/);
  await chat.handle({ type: "cancel", sessionId });
  await until(() => posted.some((m) => m.type === "update" && m.sessionId === sessionId && m.update.sessionUpdate === "state_update" && m.update.state === "cancelled"), "the cancel");
});

test("no session in the panel: the palette command says what to do", async () => {
  const c = new ChatController({
    server: { executeCommand: async (command) => (command === "darman.session.list" ? { sessions: [] } : assert.fail(`${command} was sent without a session`)) },
    memento: new MemoryMemento() as never,
    diffs,
    configuredModel: () => "",
    reveal: () => {},
  });
  const got: HostMessage[] = [];
  c.attach({ post: (m) => got.push(m) });
  await c.handle({ type: "webviewReady" });
  await c.revertFromPalette(false);
  const m = got.find((x) => x.type === "revertFailed");
  assert.ok(m && m.type === "revertFailed" && /No session is open in the panel/.test(m.message));
});
