// The session list (open, switch, rename, delete, new), the model picker,
// and what survives a reload of the view through getState/setState.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { skip, webview } from "./harness.mjs";

const now = new Date().toISOString();
const sessions = [
  { sessionId: "s1", title: "Fix the parser", updatedAt: now, state: "idle", model: "anthropic/claude-x" },
  { sessionId: "s2", title: "Add a benchmark", updatedAt: "2026-01-02T10:00:00Z", state: "running", model: "openai/gpt-y" },
];
const ready = {
  type: "ready",
  models: [{ id: "anthropic/claude-x", name: "Claude X" }, { id: "openai/gpt-y", name: "GPT Y" }],
  model: "anthropic/claude-x",
  commands: [{ name: "review" }],
};

describe("webview sessions and state", { skip }, () => {
  const page = webview();

  test("the session list posts open, rename, delete and new", async () => {
    const w = await page();
    const p = w.page;
    await w.send(ready, { type: "session", sessionId: "s1", title: "Fix the parser", model: "", state: "idle", updates: [] });
    const toggle = p.getByRole("button", { name: "Sessions: Fix the parser" });
    await toggle.click();
    assert.equal(await toggle.getAttribute("aria-expanded"), "true");
    await w.waitPosted("listSessions");
    await w.send({ type: "sessions", sessions, current: "s1" });
    const list = p.getByRole("list", { name: "Sessions" });
    await list.getByRole("button", { name: "Open Add a benchmark" }).waitFor();
    assert.equal(await list.getByRole("button", { name: "Open Fix the parser" }).getAttribute("aria-current"), "true");
    assert.match(await list.getByRole("button", { name: "Open Add a benchmark" }).innerText(), /running/);

    // Rename: Enter commits, the header follows for the current session.
    await list.getByRole("button", { name: "Rename Fix the parser" }).click();
    const input = p.getByRole("textbox", { name: "New session title" });
    assert.ok(await input.evaluate((el) => el === document.activeElement));
    await input.fill("Fix the lexer");
    await input.press("Enter");
    assert.deepEqual(await w.waitPosted("renameSession"), { type: "renameSession", sessionId: "s1", title: "Fix the lexer" });
    await p.getByRole("button", { name: "Sessions: Fix the lexer" }).waitFor();
    // Escape abandons a rename.
    await list.getByRole("button", { name: "Rename Add a benchmark" }).click();
    await input.fill("nope");
    await input.press("Escape");
    await list.getByRole("button", { name: "Open Add a benchmark" }).waitFor();
    assert.equal((await w.posted()).filter((m) => m.type === "renameSession").length, 1);

    // Delete asks for a second click.
    const del = list.getByRole("button", { name: "Delete Add a benchmark" });
    await del.click();
    assert.equal((await w.posted()).filter((m) => m.type === "deleteSession").length, 0);
    await list.getByRole("button", { name: "Confirm: delete Add a benchmark for good" }).click();
    assert.deepEqual(await w.waitPosted("deleteSession"), { type: "deleteSession", sessionId: "s2" });
    await list.getByRole("button", { name: "Open Add a benchmark" }).waitFor({ state: "detached" });

    // Switching posts loadSession and closes the list.
    await w.send({ type: "sessions", sessions, current: "s1" });
    await list.getByRole("button", { name: "Open Add a benchmark" }).click();
    assert.deepEqual(await w.waitPosted("loadSession"), { type: "loadSession", sessionId: "s2" });
    assert.ok(await p.locator("#session-panel").isHidden());

    // Escape closes the list.
    await toggle.click();
    await list.waitFor();
    await p.keyboard.press("Escape");
    assert.ok(await p.locator("#session-panel").isHidden());

    // New session empties the stream at once.
    await w.update("s1", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "old answer" } });
    await p.getByText("old answer").waitFor();
    await p.getByRole("button", { name: "New session" }).click();
    assert.deepEqual(await w.waitPosted("newSession"), { type: "newSession" });
    assert.equal(await p.locator(".entry").count(), 0);
    assert.equal(await p.locator(".session-title").innerText(), "New session");
    await w.close();
  });

  test("the model picker lists the server's models and posts the choice", async () => {
    const w = await page();
    const p = w.page;
    await w.send(ready, { type: "session", sessionId: "s1", title: "", model: "", state: "idle", updates: [] });
    const picker = p.getByRole("combobox", { name: "Model" });
    await p.waitForFunction(() => document.querySelector(".model-picker").options.length === 2);
    assert.deepEqual(await picker.locator("option").allInnerTexts(), ["Claude X", "GPT Y"]);
    assert.equal(await picker.inputValue(), "anthropic/claude-x");
    await picker.selectOption("openai/gpt-y");
    assert.deepEqual(await w.waitPosted("setModel"), { type: "setModel", model: "openai/gpt-y" });
    const box = p.getByRole("combobox", { name: "Message darman" });
    await box.fill("hi");
    await box.press("Enter");
    assert.equal((await w.waitPosted("prompt")).model, "openai/gpt-y");
    await w.close();
  });

  test("the models the endpoint serves replace the picker's list and keep the choice", async () => {
    const w = await page();
    const p = w.page;
    await w.send(ready, { type: "session", sessionId: "s1", title: "", model: "", state: "idle", updates: [] });
    const picker = p.getByRole("combobox", { name: "Model" });
    await p.waitForFunction(() => document.querySelector(".model-picker").options.length === 2);
    await picker.selectOption("openai/gpt-y");
    await w.send({ type: "models", models: [{ id: "ollama/qwen3:8b", name: "Qwen 3 8B" }, { id: "openai/gpt-y" }] });
    await p.waitForFunction(() => document.querySelector(".model-picker").options[0]?.value === "ollama/qwen3:8b");
    assert.deepEqual(await picker.locator("option").allInnerTexts(), ["Qwen 3 8B", "openai/gpt-y"]);
    assert.equal(await picker.inputValue(), "openai/gpt-y");
    await w.close();
  });

  test("deleting the current session leaves an empty panel whose prompt starts a new one", async () => {
    const w = await page();
    const p = w.page;
    await w.send({ type: "session", sessionId: "s1", title: "Old", model: "", state: "idle", updates: [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "old answer" } }] });
    await p.getByText("old answer").waitFor();
    // What the host sends after darman.session.delete of the current session.
    await w.send({ type: "session", sessionId: "", title: "", model: "", state: "idle", updates: [] });
    await p.getByText("old answer").waitFor({ state: "detached" });
    const box = p.getByRole("combobox", { name: "Message darman" });
    await box.fill("fresh start");
    await box.press("Enter");
    assert.deepEqual(await w.waitPosted("prompt"), { type: "prompt", text: "fresh start", context: [] });
    await w.update("s9", { sessionUpdate: "user_message_chunk", content: { type: "text", text: "fresh start" } }, { sessionUpdate: "state_update", state: "running" });
    await p.locator(".entry.user").waitFor();
    await w.close();
  });

  test("the saved stream keeps the last 200 entries", async () => {
    const w = await page();
    const p = w.page;
    await w.send({ type: "session", sessionId: "s1", title: "", model: "", state: "idle", updates: [] });
    const notices = Array.from({ length: 250 }, (_, i) => ({ sessionUpdate: "notice", level: "info", message: `notice ${i}` }));
    await w.update("s1", ...notices);
    await p.getByText("notice 249").waitFor();
    await p.waitForFunction(() => JSON.parse(localStorage.getItem("vscode-state") ?? "{}").transcript?.entries?.length === 200);
    await p.reload();
    await p.getByText("notice 249").waitFor();
    assert.equal(await p.locator(".entry").count(), 200);
    assert.equal(await p.locator(".entry").first().innerText(), "notice 50");
    await w.close();
  });

  test("a server error says what to do and its button runs the host's command", async () => {
    const w = await page();
    const p = w.page;
    await w.send({
      type: "serverError",
      message: "darman was not found. Set darman.path or install darman.",
      action: { label: "Open install docs", command: "darman.openInstallDocs" },
    });
    const alert = p.getByRole("alert");
    await alert.waitFor();
    assert.match(await alert.innerText(), /darman was not found/);
    await alert.getByRole("button", { name: "Open install docs" }).click();
    assert.deepEqual(await w.waitPosted("runCommand"), { type: "runCommand", command: "darman.openInstallDocs" });
    // Once the server answers, the banner goes.
    await w.send(ready);
    await alert.waitFor({ state: "detached" });
    await w.close();
  });

  test("state comes back after a reload", async () => {
    const w = await page();
    const p = w.page;
    await w.send(ready, { type: "session", sessionId: "s1", title: "Kept", model: "", state: "idle", updates: [] });
    const box = p.getByRole("combobox", { name: "Message darman" });
    await box.fill("earlier prompt");
    await box.press("Enter");
    await w.update(
      "s1",
      { sessionUpdate: "state_update", state: "running" },
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "earlier prompt" } },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "kept **answer**" } },
      { sessionUpdate: "tool_call", toolCallId: "c", title: "ls", kind: "execute", status: "in_progress" },
      { sessionUpdate: "tool_call_update", toolCallId: "c", title: "ls", kind: "execute", status: "completed", content: [{ type: "terminal", output: "a\nb\n" }] },
      { sessionUpdate: "usage_update", inputTokens: 10, outputTokens: 5 },
      { sessionUpdate: "state_update", state: "requires_action" },
    );
    const permission = {
        type: "permission",
        request: {
          sessionId: "s1",
          turnId: "t",
          requestId: "q1",
          toolCall: { toolCallId: "c2", title: "rm -rf build", permission: "bash", subjects: ["rm -rf build"] },
          options: [
            { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
            { optionId: "reject_once", name: "Reject", kind: "reject_once" },
          ],
        },
      };
    await w.send({ type: "context", chip: { uri: "file:///w/x.go", label: "x.go" } }, permission);
    await p.locator(".permission").waitFor();
    await box.fill("half-written");
    // Saving is throttled; wait until the state holds the draft.
    await p.waitForFunction(() => JSON.parse(localStorage.getItem("vscode-state") ?? "{}").draft === "half-written");
    const before = await p.locator(".stream").innerText();

    await p.reload();
    await p.waitForFunction(() => window.__posted?.some((m) => m.type === "webviewReady"));
    await p.locator(".entry.agent").waitFor();
    assert.equal(await p.locator(".stream").innerText(), before);
    // An open question is not kept (it may have been answered meanwhile):
    // the host asks it again after webviewReady.
    assert.equal(await p.locator(".permission").count(), 0);
    await w.send(permission);
    await p.locator(".permission").waitFor();
    assert.equal(await p.locator(".entry.agent strong").innerText(), "answer");
    assert.equal(await p.locator(".terminal").textContent(), "a\nb\n");
    assert.equal(await box.inputValue(), "half-written");
    assert.equal(await p.locator(".chip-label").innerText(), "x.go");
    assert.equal(await p.locator(".session-title").innerText(), "Kept");
    assert.equal(await p.getByRole("combobox", { name: "Model" }).inputValue(), "anthropic/claude-x");
    assert.match(await p.locator(".turn-status").innerText(), /darman is waiting for you/);
    await p.getByRole("button", { name: "Cancel" }).waitFor();
    // History survived too.
    await box.fill("");
    await box.press("ArrowUp");
    assert.equal(await box.inputValue(), "earlier prompt");
    // The restored card still answers; the turn continues in the same blocks.
    await p.locator(".permission").getByRole("button", { name: "Allow once" }).click();
    assert.deepEqual(await w.waitPosted("answerPermission"), { type: "answerPermission", requestId: "q1", optionId: "allow_once" });
    await w.update(
      "s1",
      { sessionUpdate: "state_update", state: "running" },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "done" } },
      { sessionUpdate: "usage_update", inputTokens: 10, outputTokens: 5 },
      { sessionUpdate: "state_update", state: "idle" },
    );
    await p.getByRole("button", { name: "Send" }).waitFor();
    assert.equal(await p.locator(".usage").count(), 1, "one usage line per turn, also across a reload");
    assert.match(await p.locator(".usage").innerText(), /^20 in · 10 out/);
    assert.deepEqual(w.errors, []);
    await w.close();
  });
});
