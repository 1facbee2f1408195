// Inline completions in VS Code: what gates a request to darman (the
// on/off setting, the languages setting, the snooze), the status-bar item
// and its menu, all through the extension's own code on the stubbed editor
// API. completion-darman.test.ts sends the requests to the real darman lsp.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { commands, InlineCompletionTriggerKind, MemoryMemento, record, testing, workspace } from "./stub/vscode";
import { commandIds, CompletionGate, completionStatusText, InlineCompletions, languageEnabled, snoozeKey, type GateSettings } from "../src/completion";

const automatic = { triggerKind: InlineCompletionTriggerKind.Automatic, selectedCompletionInfo: undefined };
const invoked = { triggerKind: InlineCompletionTriggerKind.Invoke, selectedCompletionInfo: undefined };
const offering = { initializeResult: { capabilities: { inlineCompletionProvider: {} } } };
const token = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) };

function file(name: string, text: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "darman-completion-"));
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return testing.openEditor(p, [0, text.length, 0, text.length]);
}

/** Runs the middleware and says whether it went on to darman (next). */
async function asks(c: InlineCompletions, doc: unknown, context: unknown): Promise<boolean> {
  let asked = false;
  const out = await c.middleware(doc as never, { line: 0, character: 0 } as never, context as never, token as never, async () => {
    asked = true;
    return [];
  });
  assert.equal(asked ? "asked" : out, asked ? "asked" : null, "a request not sent answers null");
  return asked;
}

test("languages: an entry for the language wins, then *, then on", () => {
  assert.equal(languageEnabled(undefined, "go"), true);
  assert.equal(languageEnabled({ "*": false }, "go"), false);
  assert.equal(languageEnabled({ "*": false, go: true }, "go"), true);
  assert.equal(languageEnabled({ "*": true, plaintext: false }, "plaintext"), false);
});

test("the gate: off and snoozed stop typing's requests, not an explicit one; a snooze ends on time", async () => {
  let now = 1_000_000;
  const settings: GateSettings = { enable: true, languages: { markdown: false } };
  const store = new MemoryMemento();
  const gate = new CompletionGate(() => settings, store, () => now);
  assert.deepEqual(gate.state(), { kind: "on" });
  assert.ok(gate.allows("go", false));
  assert.ok(!gate.allows("markdown", true), "a language turned off never asks, even explicitly");

  const until = await gate.snooze(5);
  assert.equal(until, now + 5 * 60_000);
  assert.deepEqual(gate.state(), { kind: "snoozed", until });
  assert.ok(!gate.allows("go", false));
  assert.ok(gate.allows("go", true), "Trigger Inline Suggestion still asks while snoozed");
  assert.equal(gate.snoozeLeft(), 5 * 60_000);
  now = until;
  assert.deepEqual(gate.state(), { kind: "on" }, "the snooze is over at its end");
  assert.equal(gate.snoozeLeft(), 0);

  await gate.snooze(1);
  await gate.resume();
  assert.equal(store.get(snoozeKey), undefined);
  settings.enable = false;
  assert.deepEqual(gate.state(), { kind: "off" });
  assert.ok(!gate.allows("go", false));
  assert.ok(gate.allows("go", true));
});

test("the status text says on, off, off for this language, snoozed until when", () => {
  assert.equal(completionStatusText({ kind: "on" }).text, "$(sparkle) Completions");
  assert.equal(completionStatusText({ kind: "off" }).text, "$(circle-slash) Completions");
  const off = completionStatusText({ kind: "on" }, { id: "plaintext", enabled: false });
  assert.equal(off.text, "$(circle-slash) Completions");
  assert.match(off.tooltip, /off for plaintext/);
  const until = new Date(2026, 11, 1, 14, 5).getTime();
  const s = completionStatusText({ kind: "snoozed", until });
  assert.equal(s.text, "$(clock) Completions 14:05");
  assert.match(s.tooltip, /snoozed until 14:05/);
});

test("the status item: hidden until darman offers completions; its menu snoozes, resumes, turns them off and on", async (t) => {
  testing.reset();
  const store = new MemoryMemento();
  const c = new InlineCompletions(store);
  t.after(() => c.dispose());
  const item = record.statusItems.at(-1)!;
  assert.equal(item.visible, false, "no status item while darman offers no completions");
  c.setClient({ initializeResult: { capabilities: {} } });
  assert.equal(item.visible, false, "darman without a completion model");
  c.setClient(offering);
  assert.equal(item.visible, true);
  assert.equal(item.text, "$(sparkle) Completions");
  assert.equal(item.command, commandIds.menu);

  const editor = file("main.go", "package main\n");
  assert.equal(await asks(c, editor.document, automatic), true, "on: typing asks darman");

  // Snooze for 15 minutes from the menu.
  testing.answer("Snooze for 15 minutes");
  await c.menu();
  const menu = record.prompts.at(-1)!;
  assert.deepEqual(menu.items, ["Snooze for 5 minutes", "Snooze for 15 minutes", "Snooze for 30 minutes", "Snooze for 1 hour", "Turn inline completions off"]);
  assert.match(item.text, /^\$\(clock\) Completions \d\d:\d\d$/);
  const until = store.get<number>(snoozeKey)!;
  assert.ok(Math.abs(until - (Date.now() + 15 * 60_000)) < 5_000, "the snooze ends in 15 minutes");
  assert.ok(record.executed.some((e) => e.command === "editor.action.inlineSuggest.hide"), "the ghost text on screen is hidden");
  assert.equal(await asks(c, editor.document, automatic), false, "snoozed: typing does not ask");
  assert.equal(await asks(c, editor.document, invoked), true, "snoozed: Alt+\\ asks");

  // The menu of a snoozed gate resumes.
  testing.answer("Resume inline completions now");
  await c.menu();
  assert.equal(record.prompts.at(-1)!.items![0], "Resume inline completions now");
  assert.equal(item.text, "$(sparkle) Completions");
  assert.equal(await asks(c, editor.document, automatic), true);

  // Off: the setting is written to the user's settings, and on again.
  testing.answer("Turn inline completions off");
  await c.menu();
  assert.equal(workspace.getConfiguration("darman").inspect("inlineSuggest.enable")?.globalValue, false);
  assert.equal(item.text, "$(circle-slash) Completions");
  assert.equal(await asks(c, editor.document, automatic), false);
  await c.menu(); // Escape: nothing changes
  assert.equal(item.text, "$(circle-slash) Completions");
  assert.deepEqual(record.prompts.at(-1)!.items, ["Turn inline completions on"]);
  // The palette's commands.
  await commands.executeCommand(commandIds.toggle);
  assert.equal(workspace.getConfiguration("darman").inspect("inlineSuggest.enable")?.globalValue, true);
  assert.equal(item.text, "$(sparkle) Completions");
  await commands.executeCommand(commandIds.snooze, 30);
  assert.ok(Math.abs(store.get<number>(snoozeKey)! - (Date.now() + 30 * 60_000)) < 5_000);
  await commands.executeCommand(commandIds.resume);
  assert.equal(store.get(snoozeKey), undefined);

  // A language turned off: no request, and the item says so for its editor.
  testing.setSetting("darman.inlineSuggest.languages", { globalValue: { "*": true, plaintext: false } });
  const notes = file("notes.txt", "todo\n");
  c.refresh();
  assert.equal(item.text, "$(circle-slash) Completions");
  assert.equal(await asks(c, notes.document, invoked), false);

  c.setClient(undefined);
  assert.equal(item.visible, false, "darman stopped: no item");
});

test("a snooze kept from before a reload still holds, and ends by itself", async (t) => {
  testing.reset();
  const store = new MemoryMemento();
  await store.update(snoozeKey, Date.now() + 150);
  const c = new InlineCompletions(store);
  t.after(() => c.dispose());
  c.setClient(offering);
  const item = record.statusItems.at(-1)!;
  assert.match(item.text, /^\$\(clock\)/);
  const editor = file("a.go", "package a\n");
  assert.equal(await asks(c, editor.document, automatic), false);
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(item.text, "$(sparkle) Completions", "the status bar says the snooze is over");
  assert.equal(store.get(snoozeKey), undefined);
  assert.equal(await asks(c, editor.document, automatic), true);
});

test("the status item waits for the provider: vscode-languageclient runs before it registers its features", async (t) => {
  testing.reset();
  const c = new InlineCompletions(new MemoryMemento());
  t.after(() => c.dispose());
  const item = record.statusItems.at(-1)!;
  // Like LanguageClient: Running is told while start() is still
  // registering the features, and start() on a running client returns
  // that start instead of starting again.
  let registered = false;
  let finish!: () => void;
  const started = new Promise<void>((r) => (finish = r));
  let starts = 0;
  const client = {
    initializeResult: offering.initializeResult,
    getFeature: () => ({ getState: () => ({ kind: "document", registrations: registered }) }),
    isRunning: () => true,
    start: () => {
      starts++;
      return started;
    },
  };
  c.setClient(client);
  assert.equal(item.visible, false, "no item before the provider is registered: a keystroke now asks nobody");
  registered = true;
  finish();
  await started;
  await new Promise((r) => setImmediate(r));
  assert.equal(item.visible, true, "the item shows once the start has ended");
  assert.equal(starts, 1);

  // A client stopped meanwhile: its late start shows nothing.
  let finishOld!: () => void;
  const old = { ...client, start: () => new Promise<void>((r) => (finishOld = r)) };
  c.setClient(old);
  c.setClient(undefined);
  finishOld();
  await new Promise((r) => setImmediate(r));
  assert.equal(item.visible, false, "darman stopped: no item");
});
