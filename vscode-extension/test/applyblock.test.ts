// A code block's "Apply to file" against the real darman lsp: the panel asks
// darman.turn.apply, darman's permission question comes to the panel's card
// with the proposed diff open in the diff editor, the file changes once
// allowed (through workspace/applyEdit, saved), and the turn's Revert takes
// it back; a rejection leaves the file as it was.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "./stub/vscode";
import { record, testing } from "./stub/vscode";
import { ChatController } from "../src/chat";
import { DiffContent } from "../src/diff";
import type { HostMessage } from "../shared/protocol";
import { buildDarman, openPanel, startDarman, type Darman } from "./darman";
import { until } from "./applies";

const oldMain = 'package main\n\nfunc main() {}\n';
const newMain = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("applied")\n}\n';
const editSteps = (word: string) => [
  { toolCalls: [{ name: "read", arguments: { path: "main.go" } }] },
  { toolCalls: [{ name: "edit", arguments: { path: "main.go", oldString: "func main() {}", newString: `func main() { println("${word}") }` } }] },
  { text: "Asked." },
];
const script = {
  conversations: [
    { match: "Show me a main", steps: [{ text: "Here:\n```go main.go\n" + newMain + "```" }] },
    { match: "Edit with the diff open", steps: editSteps("proposed") },
    { match: "Edit without the diff", steps: editSteps("quiet") },
  ],
};

let darman: Darman | undefined;
let skip: string | false = false;
let posted: HostMessage[] = [];
let chat: ChatController;
// The darman.openProposedDiff setting as the controller reads it.
let openProposedDiff = false;
const diffs = new DiffContent();

before(async () => {
  testing.reset();
  const bin = buildDarman();
  if (!bin) {
    skip = "go is not installed (make deps installs the toolchain the tests need)";
    return;
  }
  darman = await startDarman(bin, script, { "main.go": oldMain, "go.mod": "module example.com/hello\n\ngo 1.22\n" });
  vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(darman.workspace) }];
  ({ chat, posted } = await openPanel(darman, { diffs, openProposedDiff: () => openProposedDiff, edits: true }));
  await chat.handle({ type: "prompt", text: "Show me a main", context: [] });
  await until(() => posted.some((m) => m.type === "update" && m.update.sessionUpdate === "state_update" && m.update.state === "idle"), "the end of the turn");
});

after(async () => {
  await darman?.stop();
  vscode.workspace.workspaceFolders = undefined;
});

function last<T extends HostMessage["type"]>(type: T): Extract<HostMessage, { type: T }> | undefined {
  return posted.findLast((m) => m.type === type) as Extract<HostMessage, { type: T }> | undefined;
}

test("a rejected Apply to file leaves the file as it was and says so", async (t) => {
  if (skip) return t.skip(skip);
  const main = path.join(darman!.workspace, "main.go");
  const before = fs.readFileSync(main, "utf8");
  posted.length = 0;
  const applying = chat.handle({ type: "applyToFile", text: newMain, file: "main.go" });
  const card = await until(() => last("permission"), "the permission card");
  await chat.handle({ type: "answerPermission", requestId: card.request.requestId, optionId: "reject_once" });
  await applying;
  assert.equal(fs.readFileSync(main, "utf8"), before);
  assert.match(last("error")?.message ?? "", /Applying the code block failed: not applied/);
  assert.equal(last("applied"), undefined);
});

test("Apply to file asks darman with the proposed diff open, writes the file once allowed, and the turn's Revert undoes it", async (t) => {
  if (skip) return t.skip(skip);
  const main = path.join(darman!.workspace, "main.go");
  posted.length = 0;
  record.executed.length = 0;
  const applying = chat.handle({ type: "applyToFile", text: newMain, file: "main.go" });

  const card = await until(() => last("permission"), "the permission card");
  assert.equal(card.request.sessionId, chat.currentSession);
  assert.equal(card.request.toolCall.permission, "edit");
  assert.equal(fs.readFileSync(main, "utf8"), oldMain, "nothing is written before the answer");
  // The proposed change is in the diff editor before the answer: the file
  // as it is on the left, the block's code on the right.
  const diff = await until(() => record.executed.find((e) => e.command === "vscode.diff"), "the proposed diff");
  const [left, right] = diff.args as [vscode.Uri, vscode.Uri];
  assert.equal(right.scheme, "darman-proposed");
  assert.equal(diffs.provideTextDocumentContent(right), newMain);
  assert.equal(diffs.provideTextDocumentContent(left), oldMain);

  await chat.handle({ type: "answerPermission", requestId: card.request.requestId, optionId: "allow_once" });
  await applying;
  assert.equal(fs.readFileSync(main, "utf8"), newMain, "the block is on disk");
  assert.ok(record.saved.includes(main), "saved through the editor");
  const applied = last("applied");
  assert.ok(applied && applied.turnId.startsWith("msg_"), `applied names the turn: ${JSON.stringify(applied)}`);
  assert.equal(last("error"), undefined);

  await chat.handle({ type: "revert", sessionId: chat.currentSession!, turnId: applied.turnId, preview: false });
  const rep = last("revertReport");
  assert.ok(rep?.report.applied, `the revert: ${JSON.stringify(last("revertFailed") ?? rep)}`);
  assert.equal(fs.readFileSync(main, "utf8"), oldMain, "the revert took the applied block back");
});

test("darman.openProposedDiff opens a tool's proposed edit in the diff editor when its question arrives, and off it does not", async (t) => {
  if (skip) return t.skip(skip);
  const main = path.join(darman!.workspace, "main.go");
  const before = fs.readFileSync(main, "utf8");
  for (const on of [true, false]) {
    openProposedDiff = on;
    await chat.handle({ type: "newSession" });
    posted.length = 0;
    record.executed.length = 0;
    await chat.handle({ type: "prompt", text: on ? "Edit with the diff open" : "Edit without the diff", context: [] });
    const card = await until(() => last("permission"), "the permission card");
    assert.ok(card.request.toolCall.toolCallId, "a tool's question");
    if (on) {
      const diff = await until(() => record.executed.find((e) => e.command === "vscode.diff"), "the proposed diff");
      const [left, right] = diff.args as [vscode.Uri, vscode.Uri];
      assert.equal(right.scheme, "darman-proposed");
      assert.match(diffs.provideTextDocumentContent(right), /println\("proposed"\)/);
      assert.equal(diffs.provideTextDocumentContent(left), before);
    } else {
      assert.equal(record.executed.find((e) => e.command === "vscode.diff"), undefined, "no diff opened with the setting off");
    }
    assert.equal(fs.readFileSync(main, "utf8"), before, "nothing is written before the answer");
    await chat.handle({ type: "answerPermission", requestId: card.request.requestId, optionId: "reject_once" });
    await until(() => posted.some((m) => m.type === "update" && m.update.sessionUpdate === "state_update" && m.update.state === "idle"), "the end of the turn");
  }
  assert.equal(fs.readFileSync(main, "utf8"), before);
});

test("a block whose fence names no file applies over the editor's selection, through darman, once allowed", async (t) => {
  if (skip) return t.skip(skip);
  const main = path.join(darman!.workspace, "main.go");
  assert.equal(fs.readFileSync(main, "utf8"), oldMain);
  // The selection is line 3, "func main() {}".
  testing.openEditor(main, [2, 0, 2, 14]);
  posted.length = 0;
  const applying = chat.handle({ type: "applyToFile", text: 'func main() { println("selected") }' });
  const card = await until(() => last("permission"), "the permission card");
  assert.equal(fs.readFileSync(main, "utf8"), oldMain, "nothing is written before the answer");
  await chat.handle({ type: "answerPermission", requestId: card.request.requestId, optionId: "allow_once" });
  await applying;
  assert.equal(fs.readFileSync(main, "utf8"), 'package main\n\nfunc main() { println("selected") }\n');
  assert.ok(last("applied"), `applied: ${JSON.stringify(last("error"))}`);
});
