// darman is waiting for you: a tool call whose permission question is open
// says "waiting for you" instead of "running", the status line says darman
// waits (no spinner) and offers a jump to the question however far the
// stream scrolled, and all of it goes once the question is answered.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { skip, webview } from "./harness.mjs";

const S = "ses_wait";
const panel = { width: 420, height: 560 };

function question(id, toolCallId) {
  return {
    type: "permission",
    request: {
      sessionId: S,
      turnId: "t1",
      requestId: id,
      toolCall: {
        toolCallId,
        title: "edit main.go",
        permission: "edit",
        subjects: ["main.go"],
        always: ["edit main.go"],
        content: [{ type: "diff", uri: "file:///w/main.go", oldText: "fmt.Println(x)\n", newText: "fmt.Println(\"hello\")\n" }],
      },
      options: [
        { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
        { optionId: "reject_once", name: "Reject", kind: "reject_once" },
      ],
    },
  };
}

describe("webview: darman is waiting for you", { skip }, () => {
  const page = webview();

  for (const theme of ["light", "dark"]) {
    test(`the tool card waits for you, the status line jumps to the question (${theme})`, async () => {
      const w = await page({ theme: theme === "dark" ? "dark" : undefined, viewport: panel });
      const p = w.page;
      const long = Array.from({ length: 60 }, (_, i) => `Line ${i + 1} of a long answer.`).join("\n\n");
      await w.send({ type: "session", sessionId: S, title: "Fix main.go", model: "", state: "running", updates: [] });
      await w.update(
        S,
        { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Fix main.go" } },
        { sessionUpdate: "state_update", state: "running" },
        { sessionUpdate: "tool_call", toolCallId: "c-edit", title: "edit main.go", kind: "edit", status: "in_progress" },
        { sessionUpdate: "tool_call", toolCallId: "c-other", title: "read go.mod", kind: "read", status: "in_progress" },
      );
      const edit = p.locator("article.tool", { hasText: "edit main.go" });
      assert.equal(await edit.locator(".status-text").innerText(), "running");
      await w.send(question("q1", "c-edit"), { type: "update", sessionId: S, update: { sessionUpdate: "state_update", state: "requires_action" } });
      assert.equal(await edit.locator(".status-text").innerText(), "waiting for you");
      assert.match(await edit.getAttribute("aria-label"), /waiting for you/);
      assert.equal(await p.locator("article.tool", { hasText: "read go.mod" }).locator(".status-text").innerText(), "running", "only the asking call waits");
      const status = p.locator(".turn-status");
      assert.match(await status.innerText(), /darman is waiting for you/);
      assert.equal(await status.locator(".spinner").count(), 0, "waiting is not shown as working");

      // The stream goes on (a subagent, another call's output) and the
      // user scrolls back up: the card is out of view, the jump brings it.
      await w.update(S, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: long } });
      await p.locator("main.scroll").evaluate((el) => (el.scrollTop = 0));
      const card = p.locator('.permission[data-request="q1"]');
      const inView = () =>
        card.evaluate((el) => {
          const r = el.getBoundingClientRect();
          const s = document.querySelector("main.scroll").getBoundingClientRect();
          return r.top < s.bottom && r.bottom > s.top;
        });
      assert.equal(await inView(), false, "scrolled away");
      await w.shot("waiting");
      await status.getByRole("button", { name: "Jump to the question" }).click();
      await p.waitForFunction(() => document.activeElement?.matches('.permission[data-request="q1"]'));
      assert.equal(await inView(), true, "the jump shows the card");
      await w.shot("question");

      await card.getByRole("button", { name: "Allow once" }).click();
      assert.equal((await w.waitPosted("answerPermission")).requestId, "q1");
      await w.update(S, { sessionUpdate: "state_update", state: "running" });
      assert.equal(await edit.locator(".status-text").innerText(), "running", "answered: the call runs again");
      assert.equal(await status.getByRole("button", { name: /Jump to the question/ }).count(), 0);
      assert.doesNotMatch(await status.innerText(), /waiting/);
      await w.close();
    });
  }
});
