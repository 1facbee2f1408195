// The session list on a long transcript keeps its height, searches, closes
// on New session and on Escape from anywhere in the panel; the header takes
// the title darman gives a new session after its first turn.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { skip, webview } from "./harness.mjs";

const now = new Date().toISOString();
const sessions = Array.from({ length: 14 }, (_, i) => ({
  sessionId: `s${i}`,
  title: i === 3 ? "Fix the parser" : i === 7 ? "Parser benchmarks" : `Session number ${i}`,
  updatedAt: now,
  state: "idle",
  model: "anthropic/claude-x",
}));

describe("webview session list", { skip }, () => {
  const page = webview();

  for (const theme of ["light", "dark"]) {
    test(`the list keeps its height over a long transcript and searches (${theme})`, async () => {
      const w = await page({ theme: theme === "dark" ? "dark" : undefined, viewport: { width: 420, height: 600 } });
      const p = w.page;
      const updates = [];
      for (let i = 0; i < 150; i++) {
        updates.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text: `question ${i}` } });
        updates.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `answer ${i}\n\n` + "word ".repeat(40) } });
      }
      await w.send({ type: "session", sessionId: "s0", title: "Session number 0", model: "", state: "idle", updates });
      await p.getByRole("button", { name: "Sessions: Session number 0" }).click();
      await w.send({ type: "sessions", sessions, current: "s0" });
      const list = p.getByRole("list", { name: "Sessions" });
      await list.getByRole("button", { name: "Open Fix the parser" }).waitFor();
      const height = await p.locator(".sessions").evaluate((el) => el.getBoundingClientRect().height);
      assert.ok(height >= 200, `the list is ${height}px high, not squashed to a row`);
      // The search filters by title (and model) as you type.
      const search = p.getByRole("searchbox", { name: "Search sessions" });
      await search.click();
      await p.keyboard.type("parser");
      assert.deepEqual(await list.locator(".session-name").allInnerTexts(), ["Fix the parser", "Parser benchmarks"]);
      await w.shot("sessions");
      await p.keyboard.type("zzz");
      assert.match(await list.innerText(), /No session matches/);
      await search.fill("bench");
      await p.keyboard.press("Enter");
      assert.deepEqual(await w.waitPosted("loadSession"), { type: "loadSession", sessionId: "s7" });
      assert.ok(await p.locator(".sessions").isHidden(), "opening one closes the list");
      await w.close();
    });
  }

  test("a long history lists a page: Show older sessions asks for the next and focuses the first of them", async () => {
    const w = await page();
    const p = w.page;
    await w.send({ type: "session", sessionId: "s0", title: "Session number 0", model: "", state: "idle", updates: [] });
    await p.getByRole("button", { name: "Sessions: Session number 0" }).click();
    await w.send({ type: "sessions", sessions: sessions.slice(0, 10), current: "s0", more: true });
    const list = p.getByRole("list", { name: "Sessions" });
    const more = list.getByRole("button", { name: "Show older sessions" });
    await more.waitFor();
    await w.clearPosted();
    await more.click();
    assert.deepEqual(await w.waitPosted("moreSessions"), { type: "moreSessions" });
    await w.send({ type: "sessions", sessions, current: "s0" });
    await list.getByRole("button", { name: "Open Session number 13" }).waitFor();
    assert.equal(await more.count(), 0, "the last page has no Show older sessions");
    assert.equal(await list.locator(".session-open").count(), 14);
    assert.equal(await p.evaluate(() => document.activeElement?.getAttribute("aria-label")), "Open Session number 10", "focus stays where the button was");
    // A search that finds nothing among a page says older sessions are not listed yet.
    await w.send({ type: "sessions", sessions: sessions.slice(0, 10), current: "s0", more: true });
    await p.getByRole("searchbox", { name: "Search sessions" }).fill("benchmarks of old");
    await list.getByText("older sessions are not listed yet").waitFor();
    assert.equal(await more.count(), 1);
    await w.close();
  });

  test("New session and Escape close the list; the header takes darman's title", async () => {
    const w = await page();
    const p = w.page;
    await w.send({ type: "session", sessionId: "s0", title: "Session number 0", model: "", state: "idle", updates: [] });
    const toggle = p.getByRole("button", { name: "Sessions: Session number 0" });
    await toggle.click();
    await w.send({ type: "sessions", sessions: sessions.slice(0, 3), current: "s0" });
    await p.getByRole("button", { name: "New session", exact: true }).click();
    assert.ok(await p.locator(".sessions").isHidden(), "New session closes the list");
    // Escape with the focus on the toggle (outside the list) closes it too.
    const fresh = p.getByRole("button", { name: "Sessions: New session" });
    await fresh.click();
    await fresh.focus();
    await p.keyboard.press("Escape");
    assert.ok(await p.locator(".sessions").isHidden(), "Escape closes the list");
    assert.equal((await w.posted()).filter((m) => m.type === "cancel").length, 0);
    // A prompt in the new session: darman names it once the turn ends.
    await p.getByRole("combobox", { name: "Message darman" }).fill("Explain the lexer");
    await p.keyboard.press("Enter");
    await w.update("s9", { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Explain the lexer" } }, { sessionUpdate: "state_update", state: "running" }, { sessionUpdate: "state_update", state: "idle" });
    await w.send({ type: "sessions", sessions: [{ ...sessions[0], sessionId: "s9", title: "Explain the lexer" }], current: "s9" });
    await p.getByRole("button", { name: "Sessions: Explain the lexer" }).waitFor();
    await w.close();
  });

  for (const theme of ["light", "dark"]) {
  test(`a reloaded session shows its failure and its cancel (${theme})`, async () => {
    const w = await page({ theme, viewport: { width: 420, height: 420 } });
    const p = w.page;
    await w.send({
      type: "session",
      sessionId: "s1",
      title: "Old",
      model: "",
      state: "idle",
      updates: [
        { sessionUpdate: "user_message_chunk", content: { type: "text", text: "first" } },
        { sessionUpdate: "state_update", state: "failed", error: { code: "turn_failed", message: "the model went away" } },
        { sessionUpdate: "user_message_chunk", content: { type: "text", text: "second" } },
        { sessionUpdate: "state_update", state: "cancelled" },
        { sessionUpdate: "user_message_chunk", content: { type: "text", text: "third" } },
        { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "done" } },
      ],
    });
    assert.match(await p.locator(".failed-message").innerText(), /The turn failed: the model went away/);
    assert.equal(await p.locator(".entry.cancelled").count(), 1);
    assert.equal(await p.getByRole("button", { name: "Send" }).isVisible(), true, "a loaded session is not running");
    await w.shot("reloaded-notices");
    await w.close();
  });
  }
});
