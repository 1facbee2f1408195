// Keyboard and focus: Escape stops a running turn (unless something nearer
// takes it), focus goes back to the box after Cancel, darman.focusChat's
// message puts the caret in the box, and a follow-up typed while a turn
// runs is queued and sent when the turn ends (given back on a cancel).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { skip, webview } from "./harness.mjs";

const S = "ses_keys";

describe("webview keyboard and focus", { skip }, () => {
  const page = webview();

  async function running(w) {
    await w.send({ type: "session", sessionId: S, title: "Keys", model: "", state: "running", updates: [] });
    await w.update(
      S,
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "first" } },
      { sessionUpdate: "state_update", state: "running" },
    );
  }
  const box = (w) => w.page.getByRole("combobox", { name: "Message darman" });
  const focused = (w) => box(w).evaluate((el) => el === document.activeElement);
  const cancels = async (w) => (await w.posted()).filter((m) => m.type === "cancel").length;

  test("Escape stops a running turn; nearer uses of Escape come first", async () => {
    const w = await page();
    const p = w.page;
    await w.send({ type: "ready", models: [], model: "", commands: [{ name: "review", description: "Review" }] });
    await running(w);
    // A completion list open: Escape closes it, the turn goes on.
    await box(w).click();
    await p.keyboard.type("/re");
    await p.locator("#command-completions").waitFor();
    await p.keyboard.press("Escape");
    assert.ok(await p.locator("#command-completions").isHidden());
    assert.equal(await cancels(w), 0);
    // A permission card: Escape rejects it, the turn goes on.
    await w.send({
      type: "permission",
      request: { sessionId: S, turnId: "t", requestId: "q", toolCall: { toolCallId: "c", title: "rm -rf build", permission: "bash", subjects: ["rm -rf build"] }, options: [] },
    });
    await p.waitForFunction(() => document.activeElement?.matches(".permission"));
    await p.keyboard.press("Escape");
    assert.equal((await w.waitPosted("answerPermission")).optionId, "reject_once");
    assert.equal(await cancels(w), 0);
    // Otherwise Escape cancels, from the box or from the stream.
    await box(w).click();
    await p.keyboard.press("Escape");
    assert.deepEqual(await w.waitPosted("cancel"), { type: "cancel", sessionId: S });
    await p.locator(".stream").click();
    await p.keyboard.press("Escape");
    assert.equal(await cancels(w), 2);
    // Idle, Escape does nothing.
    await w.update(S, { sessionUpdate: "state_update", state: "cancelled" });
    await p.keyboard.press("Escape");
    assert.equal(await cancels(w), 2);
    await w.close();
  });

  test("after Cancel the caret is back in the box; darman.focusChat puts it there", async () => {
    const w = await page();
    const p = w.page;
    await running(w);
    await p.getByRole("button", { name: "Cancel" }).click();
    await w.waitPosted("cancel");
    await w.update(S, { sessionUpdate: "state_update", state: "cancelled" });
    assert.ok(await focused(w), "focus is in the box, not on <body>");
    await p.locator(".stream").click();
    assert.equal(await focused(w), false);
    await w.send({ type: "focusPrompt" });
    assert.ok(await focused(w));
    await w.close();
  });

  for (const theme of ["light", "dark"]) test(`a follow-up typed while a turn runs is queued, shown, and sent when the turn ends (${theme})`, async () => {
    const w = await page({ theme: theme === "dark" ? "dark" : undefined, viewport: { width: 420, height: 360 } });
    const p = w.page;
    await running(w);
    await box(w).click();
    await p.keyboard.type("then run the tests");
    await p.keyboard.press("Enter");
    assert.equal(await box(w).inputValue(), "", "the box is free for more");
    const queued = p.locator(".queue .queued");
    assert.equal(await queued.count(), 1);
    assert.match(await queued.innerText(), /then run the tests/);
    await p.keyboard.type("and commit");
    await p.keyboard.press("Enter");
    assert.equal(await queued.count(), 2);
    assert.equal((await w.posted()).filter((m) => m.type === "prompt").length, 0, "nothing sent while the turn runs");
    await w.shot("queued");
    // The turn ends: the first queued message goes, the second waits for its turn.
    await w.update(S, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "done" } }, { sessionUpdate: "state_update", state: "idle" });
    const first = await w.waitPosted("prompt");
    assert.equal(first.text, "then run the tests");
    assert.equal(first.sessionId, S);
    assert.equal(await queued.count(), 1);
    await w.update(S, { sessionUpdate: "user_message_chunk", content: { type: "text", text: "then run the tests" } }, { sessionUpdate: "state_update", state: "running" });
    await w.update(S, { sessionUpdate: "state_update", state: "idle" });
    await p.waitForFunction(() => window.__posted.filter((m) => m.type === "prompt").length === 2);
    assert.equal((await w.waitPosted("prompt")).text, "and commit");
    assert.equal(await queued.count(), 0);
    await w.close();
  });

  test("a cancelled turn gives the queued follow-up back to the box, unsent; Remove drops one", async () => {
    const w = await page();
    const p = w.page;
    await running(w);
    await box(w).click();
    await p.keyboard.type("drop this");
    await p.keyboard.press("Enter");
    await p.keyboard.type("keep this");
    await p.keyboard.press("Enter");
    await p.getByRole("button", { name: "Remove the queued message: drop this" }).click();
    assert.equal(await p.locator(".queue .queued").count(), 1);
    await p.keyboard.press("Escape");
    await w.waitPosted("cancel");
    await w.update(S, { sessionUpdate: "state_update", state: "cancelled" });
    assert.equal(await box(w).inputValue(), "keep this");
    assert.equal(await p.locator(".queue .queued").count(), 0);
    assert.equal((await w.posted()).filter((m) => m.type === "prompt").length, 0);
    await w.close();
  });
});
