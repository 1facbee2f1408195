// The prompt box through the keyboard: Enter sends, Shift+Enter does not,
// ↑/↓ walk the history, "/" completes commands, chips can be removed, the
// host can fill the box, and Cancel appears while a turn runs.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { skip, webview } from "./harness.mjs";

const S = "ses_p";
const chip = {
  uri: "file:///w/main.go",
  label: "main.go:12-30",
  range: { start: { line: 11, character: 0 }, end: { line: 29, character: 4 } },
};
const ready = {
  type: "ready",
  models: [{ id: "anthropic/claude-x", name: "Claude X" }, { id: "openai/gpt-y" }],
  model: "anthropic/claude-x",
  commands: [
    { name: "review", description: "Review the diff", argumentHint: "[files]" },
    { name: "release-notes", description: "Draft release notes" },
    { name: "fix", description: "Fix the problems in a file" },
  ],
};

describe("webview prompt box", { skip }, () => {
  const page = webview();

  // finishTurn plays the start and end of the turn a prompt started.
  async function finishTurn(w) {
    await w.update(S, { sessionUpdate: "state_update", state: "running" }, { sessionUpdate: "state_update", state: "idle" });
    await w.page.getByRole("button", { name: "Send" }).waitFor();
  }

  test("Enter sends, Shift+Enter adds a line, and the box clears", async () => {
    const w = await page();
    const p = w.page;
    await w.send(ready, { type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] });
    const box = p.getByRole("combobox", { name: "Message darman" });
    await box.click();
    await p.keyboard.type("first line");
    await p.keyboard.press("Shift+Enter");
    await p.keyboard.type("second line");
    assert.equal(await box.inputValue(), "first line\nsecond line");
    assert.equal((await w.posted()).filter((m) => m.type === "prompt").length, 0, "Shift+Enter does not send");
    await p.keyboard.press("Enter");
    assert.deepEqual(await w.waitPosted("prompt"), {
      type: "prompt",
      text: "first line\nsecond line",
      context: [],
      model: "anthropic/claude-x",
      sessionId: S,
    });
    assert.equal(await box.inputValue(), "");
    // While the turn is pending, Enter queues what is typed (keyboard.test.mjs
    // has the queue); it goes when the turn ends.
    assert.match(await p.locator(".turn-status").innerText(), /Sending/);
    await p.keyboard.type("too soon");
    await p.keyboard.press("Enter");
    assert.equal(await box.inputValue(), "");
    assert.match(await p.locator(".queue").innerText(), /too soon/);
    assert.equal((await w.posted()).filter((m) => m.type === "prompt").length, 1);
    await w.update(S, { sessionUpdate: "state_update", state: "running" }, { sessionUpdate: "state_update", state: "idle" });
    await p.waitForFunction(() => window.__posted.filter((m) => m.type === "prompt").length === 2);
    assert.equal((await w.waitPosted("prompt")).text, "too soon");
    // Blank input sends nothing.
    await finishTurn(w);
    await box.fill("   ");
    await box.press("Enter");
    await w.settle();
    assert.equal((await w.posted()).filter((m) => m.type === "prompt").length, 2);
    await w.close();
  });

  test("↑ and ↓ walk the history and keep the draft", async () => {
    const w = await page();
    const p = w.page;
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] });
    const box = p.getByRole("combobox", { name: "Message darman" });
    for (const t of ["one", "two", "three"]) {
      await box.fill(t);
      await box.press("Enter");
      await finishTurn(w);
    }
    await box.fill("draft");
    await box.press("ArrowUp");
    assert.equal(await box.inputValue(), "three");
    await box.press("ArrowUp");
    await box.press("ArrowUp");
    assert.equal(await box.inputValue(), "one");
    await box.press("ArrowUp");
    assert.equal(await box.inputValue(), "one", "stops at the oldest");
    await box.press("ArrowDown");
    assert.equal(await box.inputValue(), "two");
    await box.press("ArrowDown");
    await box.press("ArrowDown");
    assert.equal(await box.inputValue(), "draft", "the draft comes back");
    // ↑ inside a multi-line text moves the caret, not the history.
    await box.fill("a\nb");
    await box.press("ArrowUp");
    assert.equal(await box.inputValue(), "a\nb");
    await w.close();
  });

  for (const theme of ["light", "dark"]) {
  test(`/ completes the workspace's commands (${theme})`, async () => {
    const w = await page({ theme, viewport: { width: 420, height: 360 } });
    const p = w.page;
    await w.send(ready, { type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] });
    const box = p.getByRole("combobox", { name: "Message darman" });
    await box.click();
    await p.keyboard.type("/");
    const list = p.getByRole("listbox", { name: "Commands" });
    await list.waitFor();
    assert.equal(await box.getAttribute("aria-expanded"), "true");
    assert.equal(await list.getByRole("option").count(), 3);
    await w.shot("commands");
    await p.keyboard.type("re");
    assert.deepEqual(await list.getByRole("option").allInnerTexts(), ["/review [files]Review the diff", "/release-notesDraft release notes"].map((s) => s));
    assert.equal(await list.getByRole("option", { selected: true }).innerText(), "/review [files]Review the diff");
    await p.keyboard.press("ArrowDown");
    assert.match(await list.getByRole("option", { selected: true }).innerText(), /release-notes/);
    assert.equal(await box.getAttribute("aria-activedescendant"), "command-option-1");
    await p.keyboard.press("Tab");
    assert.equal(await box.inputValue(), "/release-notes ");
    assert.ok(await list.isHidden());
    await p.keyboard.type("v1.2");
    await w.send({ type: "context", chip });
    await p.locator(".chip").waitFor();
    await p.keyboard.press("Enter");
    // darman runs the command: the panel sends what was typed.
    const sent = await w.waitPosted("prompt");
    assert.deepEqual([sent.text, sent.context, sent.sessionId], ["/release-notes v1.2", [chip], S]);
    await finishTurn(w);
    // Escape closes the list; an unknown command is sent as typed too.
    await box.fill("");
    await p.keyboard.type("/fi");
    await list.waitFor();
    await p.keyboard.press("Escape");
    assert.ok(await list.isHidden());
    await box.fill("/nosuch thing");
    await box.press("Enter");
    await p.waitForFunction(() => window.__posted.filter((m) => m.type === "prompt").length === 2);
    assert.equal((await w.posted()).filter((m) => m.type === "prompt").at(-1).text, "/nosuch thing");
    // A click on an option picks it.
    await finishTurn(w);
    await box.fill("");
    await p.keyboard.type("/");
    await list.getByRole("option", { name: /\/fix/ }).click();
    assert.equal(await box.inputValue(), "/fix ");
    await w.close();
  });
  }

  test("each / typed at the start asks the host for the commands again; its answer is offered", async () => {
    const w = await page();
    const p = w.page;
    await w.send(ready, { type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] });
    const box = p.getByRole("combobox", { name: "Message darman" });
    await box.click();
    await p.keyboard.type("/");
    await w.waitPosted("listCommands");
    const list = p.getByRole("listbox", { name: "Commands" });
    await list.waitFor();
    assert.equal(await list.getByRole("option").count(), 3, "the list it had, meanwhile");
    await w.send({ type: "commands", commands: [...ready.commands, { name: "late", description: "Written later" }] });
    assert.equal(await list.getByRole("option").count(), 4);
    await p.keyboard.type("la");
    assert.deepEqual(await list.getByRole("option").allInnerTexts(), ["/lateWritten later"]);
    assert.equal((await w.posted()).filter((m) => m.type === "listCommands").length, 1, "once per /, not per key");
    await box.fill("");
    await p.keyboard.type("/");
    await p.waitForFunction(() => window.__posted.filter((m) => m.type === "listCommands").length === 2);
    await w.close();
  });

  test("context chips show and can be removed", async () => {
    const w = await page();
    const p = w.page;
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] }, { type: "context", chip });
    const chips = p.getByRole("list", { name: "Context sent with the prompt" });
    await chips.getByRole("listitem").waitFor();
    assert.equal(await chips.getByRole("listitem").innerText(), "main.go:12-30");
    await p.getByRole("button", { name: "Remove main.go:12-30 from the context" }).click();
    assert.deepEqual(await w.waitPosted("removeContext"), { type: "removeContext", uri: "file:///w/main.go" });
    assert.equal(await chips.getByRole("listitem").count(), 0);
    const box = p.getByRole("combobox", { name: "Message darman" });
    await box.fill("no context now");
    await box.press("Enter");
    assert.deepEqual((await w.waitPosted("prompt")).context, []);
    // A new editor context replaces the chip; null clears it.
    await w.send({ type: "context", chip: { uri: "file:///w/a.go", label: "a.go" } });
    await chips.getByRole("listitem").waitFor();
    assert.equal(await chips.getByRole("listitem").innerText(), "a.go");
    await w.send({ type: "context", chip: null });
    await chips.getByRole("listitem").waitFor({ state: "detached" });
    await w.close();
  });

  test("the host fills the prompt, and Cancel stops a running turn", async () => {
    const w = await page();
    const p = w.page;
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] });
    await w.send({ type: "fillPrompt", text: "Explain this" });
    const box = p.getByRole("combobox", { name: "Message darman" });
    await p.waitForFunction(() => document.querySelector(".prompt-input").value === "Explain this");
    assert.ok(await box.evaluate((el) => el === document.activeElement));
    await w.send({ type: "fillPrompt", text: "Fix the problems in this file", send: true });
    assert.equal((await w.waitPosted("prompt")).text, "Fix the problems in this file");
    await w.update(S, { sessionUpdate: "state_update", state: "running" });
    const cancel = p.getByRole("button", { name: "Cancel" });
    await cancel.waitFor();
    assert.ok(await p.getByRole("button", { name: "Send" }).isHidden());
    await cancel.click();
    assert.deepEqual(await w.waitPosted("cancel"), { type: "cancel", sessionId: S });
    await w.update(S, { sessionUpdate: "state_update", state: "cancelled" });
    await p.getByRole("button", { name: "Send" }).waitFor();
    await w.close();
  });

  test("a prompt without a session adopts the session its updates name", async () => {
    const w = await page();
    const p = w.page;
    const box = p.getByRole("combobox", { name: "Message darman" });
    await box.fill("hello");
    await box.press("Enter");
    const sent = await w.waitPosted("prompt");
    assert.equal(sent.sessionId, undefined);
    await w.update("ses_new", { sessionUpdate: "state_update", state: "running" }, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } });
    await p.locator(".entry.agent").waitFor();
    await p.getByRole("button", { name: "Cancel" }).click();
    assert.deepEqual(await w.waitPosted("cancel"), { type: "cancel", sessionId: "ses_new" });
    // A host error unlocks the box and says what went wrong.
    await w.update("ses_new", { sessionUpdate: "state_update", state: "idle" });
    await box.fill("again");
    await box.press("Enter");
    await w.send({ type: "error", message: "a turn is already running" });
    await p.getByRole("alert").filter({ hasText: "a turn is already running" }).waitFor();
    await p.getByRole("button", { name: "Send" }).waitFor();
    await p.getByRole("button", { name: "Dismiss" }).click();
    assert.equal(await p.getByRole("alert").count(), 0);
    await w.close();
  });
});
