// The agent picker next to the model picker: the agents a session runs,
// the chosen one sent with the prompt, and the plan → build hand-off button.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { skip, webview } from "./harness.mjs";

const S = "ses_agents";
const ready = {
  type: "ready",
  models: [{ id: "anthropic/claude-x", name: "Claude X" }],
  model: "anthropic/claude-x",
  commands: [],
  agents: [
    { name: "build", description: "darman's default agent", mode: "primary" },
    { name: "plan", description: "Reads and plans", mode: "primary" },
  ],
};

describe("webview agent picker", { skip }, () => {
  const page = webview();

  test("the picked agent goes with the prompt, and Build it hands the plan to build", async () => {
    const w = await page();
    const p = w.page;
    await w.send(ready, { type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] });
    const picker = p.getByRole("combobox", { name: "Agent" });
    assert.deepEqual(await picker.locator("option").allInnerTexts(), ["build", "plan"]);
    const handoff = p.getByRole("button", { name: "Build it" });
    assert.equal(await handoff.isVisible(), false, "no hand-off under build");
    await picker.selectOption("plan");
    const box = p.getByRole("combobox", { name: "Message darman" });
    await box.click();
    await p.keyboard.type("how would you split app.go?");
    await p.keyboard.press("Enter");
    const sent = await w.waitPosted("prompt");
    assert.equal(sent.agent, "plan");
    assert.equal(sent.sessionId, S);
    // The turn ends; the plan can be handed over.
    await w.send({ type: "update", sessionId: S, update: { sessionUpdate: "state_update", state: "idle" } });
    await handoff.waitFor({ state: "visible" });
    await handoff.click();
    // darman writes the hand-off prompt: the panel names the session.
    assert.deepEqual(await w.waitPosted("handoff"), { type: "handoff", sessionId: S });
    assert.equal(await picker.inputValue(), "build");
    // Opening a session shows its agent.
    await w.send({ type: "session", sessionId: "ses_other", title: "", model: "", state: "idle", updates: [], agent: "plan" });
    await p.waitForFunction(() => document.querySelector(".agent-picker")?.value === "plan");
  });
});
