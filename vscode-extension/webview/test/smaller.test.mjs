// The smaller things of the stream: a command's card shows the command and
// keeps its title when it fails (the failure shown beside it), a wide
// table scrolls instead of breaking words, and "Jump to the end" appears
// once the user scrolls up and brings the stream's end back.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { skip, webview } from "./harness.mjs";

const S = "ses_small";

describe("webview stream details", { skip }, () => {
  const page = webview();

  for (const theme of ["light", "dark"]) {
  test(`tool cards: the command itself, the title kept on failure (${theme})`, async () => {
    const w = await page({ theme, viewport: { width: 420, height: 300 } });
    const p = w.page;
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "running", updates: [] });
    await w.update(
      S,
      { sessionUpdate: "tool_call", toolCallId: "b", title: "Run the tests", kind: "execute", status: "in_progress", rawInput: { command: "go test ./parser/...", description: "Run the tests" } },
      { sessionUpdate: "tool_call", toolCallId: "g", title: "grep TODO", kind: "search", status: "in_progress" },
      { sessionUpdate: "tool_call_update", toolCallId: "g", title: "no match", kind: "search", status: "failed" },
    );
    const bash = p.locator("article.tool.kind-execute");
    assert.equal(await bash.locator(".tool-title").innerText(), "go test ./parser/...");
    assert.equal(await bash.locator(".tool-title").getAttribute("title"), "Run the tests");
    const grep = p.locator("article.tool.kind-search");
    assert.equal(await grep.locator(".tool-title").innerText(), "grep TODO", "the title stays");
    assert.equal(await grep.locator(".tool-failure").innerText(), "no match");
    assert.match(await grep.getAttribute("aria-label"), /grep TODO \(failed: no match\)/);
    await w.shot("tool-cards");
    await w.close();
  });

  test(`a wide table scrolls; its words are whole (${theme})`, async () => {
    const w = await page({ theme, viewport: { width: 300, height: 500 } });
    const p = w.page;
    const table = "| option | what it does | default |\n| --- | --- | --- |\n| completion.exclude | files never completed nor sent as context | .env, keys |\n| permission.bash | which commands run without asking | ask |\n";
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: table } }] });
    // Each word of a cell on one line: its text's boxes are whole words.
    const broken = await p.locator(".markdown td").evaluateAll((cells) =>
      cells.flatMap((td) => {
        const r = document.createRange();
        r.selectNodeContents(td);
        const tops = new Set([...r.getClientRects()].map((x) => Math.round(x.top)));
        const words = td.textContent.trim().split(/\s+/).length;
        return tops.size > words ? [td.textContent] : [];
      }),
    );
    assert.deepEqual(broken, [], "no cell breaks inside a word");
    assert.equal(await p.locator(".markdown table").evaluate((el) => getComputedStyle(el).overflowX), "auto");
    await w.shot("table");
    await w.close();
  });

  test(`Jump to the end shows when scrolled up and brings the end back (${theme})`, async () => {
    const w = await page({ theme, viewport: { width: 420, height: 400 } });
    const p = w.page;
    const long = Array.from({ length: 80 }, (_, i) => `Paragraph ${i}.`).join("\n\n");
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: long } }] });
    const jump = p.getByRole("button", { name: "Jump to the end" });
    assert.ok(await jump.isHidden(), "at the end: no button");
    await p.locator("main.scroll").evaluate((el) => el.scrollTo(0, 0));
    await jump.waitFor();
    await w.shot("jump-to-end");
    await jump.click();
    await p.waitForFunction(() => {
      const s = document.querySelector("main.scroll");
      return s.scrollHeight - s.scrollTop - s.clientHeight < 40;
    });
    assert.ok(await jump.isHidden());
    await w.close();
  });
  }
});

describe("webview message actions", { skip }, () => {
  const page = webview();

  for (const theme of ["light", "dark"]) {
  test(`copy an answer, ask a message again, or edit it and send it (${theme})`, async () => {
    const w = await page({ theme, viewport: { width: 420, height: 260 } });
    const p = w.page;
    await w.send({
      type: "session",
      sessionId: S,
      title: "",
      model: "",
      state: "idle",
      updates: [
        { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Explain the lexer" } },
        { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "It **scans** runes." } },
      ],
    });
    await p.locator(".entry.user").first().hover();
    await w.shot("message-actions");
    await p.getByRole("button", { name: "Copy the answer" }).click();
    assert.deepEqual(await w.waitPosted("copy"), { type: "copy", text: "It **scans** runes." });
    await p.getByRole("button", { name: "Edit this message" }).click();
    const box = p.getByRole("combobox", { name: "Message darman" });
    assert.equal(await box.inputValue(), "Explain the lexer");
    assert.ok(await box.evaluate((el) => el === document.activeElement));
    await box.fill("Explain the parser");
    await box.press("Enter");
    assert.equal((await w.waitPosted("prompt")).text, "Explain the parser");
    await w.update(S, { sessionUpdate: "state_update", state: "running" }, { sessionUpdate: "state_update", state: "idle" });
    await p.getByRole("button", { name: "Ask again" }).first().click();
    await p.waitForFunction(() => window.__posted.filter((m) => m.type === "prompt").length === 2);
    assert.equal((await w.waitPosted("prompt")).text, "Explain the lexer");
    await w.close();
  });
  }
});
