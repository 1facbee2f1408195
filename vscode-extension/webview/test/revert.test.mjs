// Revert and redo in the panel: the Revert action under a live turn that
// changed files, "Revert last turn" for a session loaded from history, the
// preview card (files and actions, conflicts with their reason and diff,
// files too large to keep), and the messages each button posts.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { skip, webview } from "./harness.mjs";

const S = "ses_revert";
const T = "turn_01";

// A live turn that edited main.go, as the host forwards darman's updates.
function liveTurn(turnId, kind = "edit") {
  return [
    { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Greet louder" } },
    { sessionUpdate: "state_update", state: "running" },
    { sessionUpdate: "tool_call", toolCallId: `c-${turnId}`, title: "edit main.go", kind, status: "completed" },
    { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done." } },
    { sessionUpdate: "state_update", state: "idle" },
  ].map((update) => ({ type: "update", sessionId: S, turnId, update }));
}

const preview = {
  type: "revertReport",
  request: { sessionId: S, turnId: T, preview: true },
  report: {
    action: "revert",
    sessionId: S,
    turnId: "msg_01",
    turn: T,
    turns: ["msg_01"],
    applied: false,
    files: [
      { path: "main.go", action: "restore" },
      { path: "gen.go", action: "delete" },
    ],
    conflicts: [{ path: "util.go", reason: "changed since the turn (unsaved in the editor)", diff: "--- util.go\n+++ util.go\n-mine\n+theirs\n" }],
    notRestorable: [{ path: "big.bin", size: 5000000 }],
    diff: "--- a/main.go\n+++ b/main.go\n-\tprintln(\"hello\")\n+\tprintln(\"hi\")\n",
  },
};

describe("webview revert and redo", { skip }, () => {
  const page = webview();

  test("a live turn that changed files gets Revert: preview, conflicts, Revert anyway, then Redo", async () => {
    const w = await page();
    const p = w.page;
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] }, ...liveTurn(T), ...liveTurn("turn_02", "read"));
    await w.settle();
    // Only the turn that ran an edit tool gets its own action.
    assert.equal(await p.getByRole("button", { name: "Revert this turn" }).count(), 1);
    assert.equal(await p.locator(".revert-turn").getAttribute("data-turn"), T);
    await w.clearPosted();
    await p.getByRole("button", { name: "Revert this turn" }).click();
    assert.deepEqual(await w.waitPosted("revert"), { type: "revert", sessionId: S, turnId: T, preview: true });
    await p.getByText("Asking darman what would change…").waitFor();

    await w.send(preview);
    const card = p.locator(".revert-card");
    await card.getByText("Revert this turn? 2 files would change.").waitFor();
    assert.deepEqual(await card.locator(".revert-file").allInnerTexts(), ["main.go restored", "gen.go deleted"]);
    const conflict = card.getByRole("group", { name: "Conflicts" });
    assert.match(await conflict.innerText(), /util\.go changed since the turn \(unsaved in the editor\)/);
    await conflict.locator("summary").click();
    assert.match(await conflict.locator(".revert-conflict-diff").innerText(), /\+theirs/);
    assert.match(await card.locator(".revert-large").innerText(), /big\.bin/);

    await card.getByRole("button", { name: "Show diff" }).click();
    assert.deepEqual(await w.waitPosted("openPatch"), { type: "openPatch", text: preview.report.diff, title: "darman revert preview" });
    await w.clearPosted();
    await card.getByRole("button", { name: "Revert anyway" }).click();
    assert.deepEqual(await w.waitPosted("revert"), { type: "revert", sessionId: S, preview: false, turnId: "msg_01", force: true });

    await w.send({
      type: "revertReport",
      request: { sessionId: S, turnId: "msg_01", preview: false, force: true },
      report: { ...preview.report, applied: true, conflicts: undefined, notRestorable: undefined, files: [{ path: "main.go", action: "restore" }], diff: "" },
    });
    await card.getByText("Reverted this turn: 1 file restored.").waitFor();
    // Redo, in the card and in the bar once the card is closed.
    await card.getByRole("button", { name: "Close" }).click();
    const bar = p.locator(".revert-bar");
    await bar.getByRole("button", { name: "Redo" }).waitFor();
    await w.clearPosted();
    await bar.getByRole("button", { name: "Redo" }).click();
    assert.deepEqual(await w.waitPosted("revert"), { type: "revert", sessionId: S, preview: true, redo: true });
    assert.deepEqual(w.errors, []);
    await w.close();
  });

  test("the plain Revert applies without force and leaves the conflicts; darman's refusal is shown", async () => {
    const w = await page();
    const p = w.page;
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] }, ...liveTurn(T));
    await p.getByRole("button", { name: "Revert this turn" }).click();
    await w.send(preview);
    await w.clearPosted();
    await p.locator(".revert-card").getByRole("button", { name: "Revert", exact: true }).click();
    assert.deepEqual(await w.waitPosted("revert"), { type: "revert", sessionId: S, preview: false, turnId: "msg_01" });
    await w.send({
      type: "revertReport",
      request: { sessionId: S, turnId: "msg_01", preview: false },
      report: { ...preview.report, applied: true, notRestorable: undefined, diff: "" },
    });
    const card = p.locator(".revert-card");
    await card.getByText("Left alone, changed since:").waitFor();
    assert.equal(await card.getByRole("button", { name: "Revert anyway" }).count(), 1);

    await w.send({
      type: "revertFailed",
      request: { sessionId: S, preview: true },
      message: "darman.turn.revert: the session is running a turn; cancel it (darman.cancel) or wait for it to end",
    });
    const alert = card.getByRole("alert");
    await alert.waitFor();
    assert.match(await alert.innerText(), /darman could not revert: darman\.turn\.revert: the session is running a turn/);
    // Another session's answer is not shown here.
    await w.send({ type: "revertFailed", request: { sessionId: "other", preview: true }, message: "not ours" });
    await w.settle();
    assert.equal(await p.getByText("not ours").count(), 0);
    await w.close();
  });

  test("a session loaded from history offers Revert last turn, hidden while a turn runs", async () => {
    const w = await page();
    const p = w.page;
    const history = liveTurn(T).map((m) => m.update).filter((u) => u.sessionUpdate !== "state_update");
    await w.send({ type: "session", sessionId: S, title: "Old", model: "", state: "idle", updates: history });
    const last = p.getByRole("button", { name: "Revert last turn" });
    await last.waitFor();
    assert.equal(await p.getByRole("button", { name: "Revert this turn" }).count(), 0, "history has no turn ids");
    await w.clearPosted();
    await last.click();
    assert.deepEqual(await w.waitPosted("revert"), { type: "revert", sessionId: S, preview: true });
    await w.send({ type: "revertReport", request: { sessionId: S, preview: true }, report: { sessionId: S, turnId: "msg_01", turns: ["msg_01"], applied: false, files: [], diff: "" } });
    await p.getByText("Nothing to revert: the files are as they would be.").waitFor();
    await p.locator(".revert-card").getByRole("button", { name: "Close" }).click();
    await w.update(S, { sessionUpdate: "state_update", state: "running" });
    await w.settle();
    assert.equal(await last.isVisible(), false, "not offered while a turn runs");
    await w.close();
  });

  test("a reloaded session keeps each turn's Revert: darman.session.load's turns place it under the turns that changed files", async () => {
    const w = await page();
    const p = w.page;
    const edited = liveTurn(T).map((m) => m.update).filter((u) => u.sessionUpdate !== "state_update");
    const asked = [
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "What is it?" } },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "A greeting." } },
    ];
    const ranBash = liveTurn("x", "execute").map((m) => m.update).filter((u) => u.sessionUpdate !== "state_update");
    const updates = [...edited, ...asked, ...ranBash];
    const turns = [
      { turnId: "msg_01", start: 0 },
      { turnId: "msg_02", start: edited.length },
      { turnId: "msg_03", start: edited.length + asked.length },
    ];
    await w.send({ type: "session", sessionId: S, title: "Old", model: "", state: "idle", updates, turns });
    const reverts = p.getByRole("button", { name: "Revert this turn" });
    await p.getByText("A greeting.").waitFor();
    assert.equal(await reverts.count(), 2, "the two turns that changed files have Revert, the question none");
    // Under its own turn: the first Revert comes before the question.
    assert.ok(await p.evaluate(() => {
      const first = document.querySelector(".revert-turn");
      const q = [...document.querySelectorAll(".entry")].find((e) => e.textContent.includes("What is it?"));
      return first && q && first.compareDocumentPosition(q) & Node.DOCUMENT_POSITION_FOLLOWING;
    }), "the first turn's Revert is under it");
    await w.clearPosted();
    await reverts.first().click();
    assert.deepEqual(await w.waitPosted("revert"), { type: "revert", sessionId: S, preview: true, turnId: "msg_01" });
    await w.close();
  });

  test("a code block applied to a turn: Revert under it live, and again once reloaded (darman's turns say files)", async () => {
    const w = await page();
    const p = w.page;
    const answer = [
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Show me a main" } },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Here it is." } },
    ];
    await w.send({ type: "session", sessionId: S, title: "Old", model: "", state: "idle", updates: answer, turns: [{ turnId: "msg_01", start: 0 }] });
    await p.getByText("Here it is.").waitFor();
    const reverts = p.getByRole("button", { name: "Revert this turn" });
    assert.equal(await reverts.count(), 0, "a turn that changed nothing has no Revert");
    await w.send({ type: "applied", sessionId: S, turnId: "msg_01", uri: "file:///w/main.go", message: "Wrote main.go" });
    await reverts.first().waitFor();
    await w.send({ type: "applied", sessionId: S, turnId: "msg_01", uri: "file:///w/main.go", message: "Wrote main.go" });
    assert.equal(await reverts.count(), 1, "a second apply adds no second Revert");
    await w.send({ type: "session", sessionId: S, title: "Old", model: "", state: "idle", updates: answer, turns: [{ turnId: "msg_01", start: 0, files: true }] });
    await p.getByText("Here it is.").waitFor();
    assert.equal(await reverts.count(), 1, "reloaded, the turn that holds the applied block keeps its Revert");
    await w.clearPosted();
    await reverts.first().click();
    assert.deepEqual(await w.waitPosted("revert"), { type: "revert", sessionId: S, preview: true, turnId: "msg_01" });
    await w.close();
  });
});
