// @terminal: the last command a terminal ran and its output (VS Code's
// shell integration events), offered by @ and sent to darman as a text
// reference that reaches the model as plain text, escape sequences gone.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { testing } from "./stub/vscode";
import { plainText, watchTerminals } from "../src/terminal";
import type { HostMessage } from "../shared/protocol";
import { buildDarman, openPanel, startDarman, type Darman } from "./darman";
import { until } from "./applies";

let darman: Darman | undefined;
let skip: string | false = false;
const watching = watchTerminals();

before(async () => {
  const bin = buildDarman();
  if (!bin) {
    skip = "go is not installed (make deps installs the toolchain the tests need)";
    return;
  }
  darman = await startDarman(bin, { steps: [{ text: "The test failed." }] }, { "go.mod": "module example.com/t\n\ngo 1.22\n" });
});

after(async () => {
  watching.dispose();
  await darman?.stop();
});

test("terminal output reads as plain text", () => {
  assert.equal(plainText("\x1b]633;C\x07\x1b[31mFAIL\x1b[0m\r\nok\r\n"), "FAIL\nok\n");
  assert.equal(plainText("10%\r50%\r100%\ndone"), "100%\ndone", "a progress line keeps its last state");
});

test("@terminal offers the last command, and its output reaches the model", async (t) => {
  if (skip || !darman) return t.skip(String(skip));
  const { chat, posted } = await openPanel(darman);

  await chat.handle({ type: "mentionQuery", id: 1, query: "term" });
  const none = posted.find((m): m is Extract<HostMessage, { type: "mentions" }> => m.type === "mentions" && m.id === 1);
  assert.deepEqual(none?.items.filter((i) => i.kind === "terminal"), [], "no terminal has run a command yet");

  await testing.runInTerminal("bash", "go test ./...", ["\x1b]633;C\x07", "--- \x1b[31mFAIL\x1b[0m: TestSum (0.00s)\r\n", "    sum_test.go:9: got 3, want 4\r\n", "FAIL\r\n"], 1);
  await chat.handle({ type: "mentionQuery", id: 2, query: "term" });
  const offered = posted.find((m): m is Extract<HostMessage, { type: "mentions" }> => m.type === "mentions" && m.id === 2);
  const item = offered?.items.find((i) => i.kind === "terminal");
  assert.deepEqual(item, { kind: "terminal", label: "terminal", detail: "$ go test ./...", uri: "darman:terminal" });

  await chat.handle({ type: "prompt", text: "Why did it fail?", context: [{ uri: item!.uri, label: item!.label, kind: "terminal" }] });
  const failed = posted.find((m) => m.type === "error");
  assert.equal(failed, undefined, `the prompt failed: ${JSON.stringify(failed)}`);
  await until(() => posted.some((m) => m.type === "update" && m.update.sessionUpdate === "state_update" && m.update.state === "idle"), "the end of the turn");
  const body = JSON.stringify((await darman.calls()).at(-1));
  assert.ok(
    body.includes(JSON.stringify("$ go test ./... (exit code 1)\n--- FAIL: TestSum (0.00s)\n    sum_test.go:9: got 3, want 4\nFAIL").slice(1, -1)),
    `the command and its output, as plain text: ${body.slice(0, 1500)}`,
  );
  assert.ok(!body.includes("\\u001b"), "no escape sequence reaches the model");
});
