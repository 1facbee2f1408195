// Every session update kind renders; hostile markdown stays inert; code
// blocks, locations and diffs post what the host needs; a loaded session
// replaces the stream.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { skip, webview } from "./harness.mjs";

const S = "ses_1";
const text = (t) => ({ type: "text", text: t });

describe("webview stream", { skip }, () => {
  const page = webview();
  let w;

  test("every update kind renders", async () => {
    w = await page();
    const p = w.page;
    await w.send({ type: "session", sessionId: S, title: "First", model: "m/one", state: "idle", updates: [] });
    await w.update(
      S,
      { sessionUpdate: "state_update", state: "running" },
      { sessionUpdate: "user_message_chunk", content: text("Fix the **bug**") },
      { sessionUpdate: "agent_thought_chunk", content: text("Looking at ") },
      { sessionUpdate: "agent_thought_chunk", content: text("main.go") },
      { sessionUpdate: "agent_message_chunk", content: text("I'll read ") },
      { sessionUpdate: "agent_message_chunk", content: text("`main.go` first.") },
      {
        sessionUpdate: "tool_call",
        toolCallId: "c1",
        title: "read main.go",
        kind: "read",
        status: "pending",
        locations: [{ uri: "file:///w/main.go", range: { start: { line: 11, character: 0 }, end: { line: 11, character: 0 } } }],
      },
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "c1",
        title: "read main.go",
        kind: "read",
        status: "completed",
        locations: [{ uri: "file:///w/main.go", range: { start: { line: 11, character: 0 }, end: { line: 11, character: 0 } } }],
        content: [{ type: "content", content: text("package main\n") }],
      },
      { sessionUpdate: "tool_call", toolCallId: "c2", title: "go test ./...", kind: "execute", status: "in_progress" },
      { sessionUpdate: "tool_call_update", toolCallId: "c2", title: "go test ./...", kind: "execute", status: "in_progress", content: [{ type: "terminal", output: "ok  pkg/a\n" }] },
      { sessionUpdate: "tool_call_update", toolCallId: "c2", title: "go test ./...", kind: "execute", status: "failed", content: [{ type: "terminal", output: "ok  pkg/a\nFAIL pkg/b\n" }] },
      {
        sessionUpdate: "tool_call",
        toolCallId: "c3",
        title: "edit main.go",
        kind: "edit",
        status: "completed",
        content: [{ type: "diff", uri: "file:///w/main.go", oldText: "a\nb\nc\n", newText: "a\nB\nc\nd\n" }],
      },
      { sessionUpdate: "plan", entries: [{ content: "read", status: "completed" }, { content: "fix", status: "in_progress" }] },
      { sessionUpdate: "plan", entries: [{ content: "read", status: "completed" }, { content: "fix", status: "completed" }, { content: "test", status: "pending" }] },
      { sessionUpdate: "usage_update", inputTokens: 1000, outputTokens: 200, cacheReadTokens: 500, cost: 0.004, contextUsed: 1500, contextWindow: 200000 },
      { sessionUpdate: "usage_update", inputTokens: 1200, outputTokens: 100, cost: 0.002, contextUsed: 3000, contextWindow: 200000 },
      { sessionUpdate: "notice", level: "warning", message: "the model call failed (rate limited); retrying in 2s (attempt 1)" },
    );
    await p.locator(".notice.level-warning").waitFor();

    // Status spinner while running, and a Cancel button.
    assert.match(await p.locator(".turn-status").innerText(), /Working/);
    assert.equal(await p.locator(".spinner").count(), 1);
    assert.ok(await p.getByRole("button", { name: "Cancel" }).isVisible());

    assert.equal(await p.locator(".entry.user .user-text").innerText(), "Fix the **bug**");
    // Consecutive chunks are one block.
    assert.equal(await p.locator(".entry.agent").count(), 1);
    assert.equal((await p.locator(".entry.agent").innerText()).trim(), "I'll read main.go first.");
    assert.equal(await p.locator(".entry.agent code").innerText(), "main.go");
    assert.equal(await p.locator(".entry.thought").count(), 1);
    assert.equal(await p.locator(".entry.thought").getAttribute("open"), null, "thoughts start collapsed");
    await p.locator(".entry.thought summary").click();
    assert.equal((await p.locator(".thought-text").innerText()).trim(), "Looking at main.go");

    // Tool cards: one per call, updated in place.
    assert.equal(await p.locator(".tool").count(), 3);
    const read = p.locator(".tool.kind-read");
    assert.ok(await read.evaluate((el) => el.classList.contains("status-completed")));
    assert.equal(await read.locator(".tool-title").innerText(), "read main.go");
    assert.equal(await read.locator(".status-text").innerText(), "done");
    assert.equal(await read.locator(".icon-read").count(), 1);
    assert.equal((await read.locator(".tool-output").innerText()).trim(), "package main");
    assert.equal(await read.locator("button.location").innerText(), "main.go:12");
    await w.clearPosted();
    await read.locator("button.location").click();
    assert.deepEqual(await w.waitPosted("openLocation"), {
      type: "openLocation",
      location: { uri: "file:///w/main.go", range: { start: { line: 11, character: 0 }, end: { line: 11, character: 0 } } },
    });
    const exec = p.locator(".tool.kind-execute");
    assert.ok(await exec.evaluate((el) => el.classList.contains("status-failed")));
    assert.equal(await exec.locator(".terminal").textContent(), "ok  pkg/a\nFAIL pkg/b\n");
    assert.equal(await exec.locator(".terminal").count(), 1);
    const edit = p.locator(".tool.kind-edit");
    assert.equal(await edit.locator(".added").innerText(), "+2");
    assert.equal(await edit.locator(".removed").innerText(), "−1");
    await edit.getByRole("button", { name: /Open diff/ }).click();
    assert.deepEqual(await w.waitPosted("openDiff"), {
      type: "openDiff",
      uri: "file:///w/main.go",
      oldText: "a\nb\nc\n",
      newText: "a\nB\nc\nd\n",
      title: "main.go: edit main.go",
    });

    // One plan per turn, showing the latest.
    assert.equal(await p.locator(".plan").count(), 1);
    assert.equal(await p.locator(".plan-item").count(), 3);
    assert.equal(await p.locator(".plan-count").innerText(), "2/3 done");
    // Usage summed over the turn's model calls.
    assert.equal(await p.locator(".usage").count(), 1);
    assert.equal(await p.locator(".usage").innerText(), "2.2k in · 300 out · 500 cache read · $0.0060 · context 2% of 200k");

    // The turn ends: spinner gone, Send back.
    await w.update(S, { sessionUpdate: "state_update", state: "idle" });
    await p.locator(".spinner").waitFor({ state: "detached" });
    assert.ok(await p.getByRole("button", { name: "Send" }).isVisible());
    assert.equal(await p.locator(".thought-label").innerText(), "Thought");

    // A failed turn says what happened and what to do, and Retry resends.
    await w.update(
      S,
      { sessionUpdate: "state_update", state: "running" },
      { sessionUpdate: "state_update", state: "failed", error: { code: "turn_failed", message: "401 unauthorized" } },
    );
    const failed = p.locator(".notice.failed");
    await failed.waitFor();
    assert.equal(await failed.getAttribute("role"), "alert");
    assert.match(await failed.innerText(), /The turn failed: 401 unauthorized/);
    assert.match(await failed.innerText(), /darman's log/);
    await w.clearPosted();
    await failed.getByRole("button", { name: "Show log" }).click();
    assert.deepEqual(await w.waitPosted("runCommand"), { type: "runCommand", command: "darman.showOutput" });
    await w.clearPosted();
    await failed.getByRole("button", { name: "Retry" }).click();
    assert.deepEqual(await w.waitPosted("prompt"), { type: "prompt", text: "Fix the **bug**", context: [], sessionId: S });

    await w.update(S, { sessionUpdate: "state_update", state: "running" }, { sessionUpdate: "state_update", state: "cancelled" });
    await p.locator(".notice.cancelled").waitFor();

    // Every control has a name a screen reader can say.
    const unnamed = await p.evaluate(() =>
      Array.from(document.querySelectorAll("button, textarea, input, select, summary, [tabindex]"))
        .filter((el) => !(el.getAttribute("aria-label") || el.getAttribute("aria-labelledby") || el.textContent.trim()))
        .map((el) => el.outerHTML.slice(0, 80)),
    );
    assert.deepEqual(unnamed, []);

    assert.deepEqual(await w.csp(), [], "no CSP violations");
    assert.deepEqual(w.errors, []);
    await w.close();
  });

  test("hostile markdown is inert", async () => {
    w = await page();
    const p = w.page;
    const hostile = [
      "<img src=x onerror=\"window.__pwned='img'\">",
      "<script>window.__pwned='script'</script>",
      "[click](javascript:window.__pwned='link')",
      "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
      "<a href=\"javascript:window.__pwned='a'\">raw</a>",
      "![pixel](https://evil.example/track.png)",
      "<svg onload=\"window.__pwned='svg'\"></svg>",
      "<iframe src=\"javascript:window.__pwned='iframe'\"></iframe>",
      '<div style="background:url(https://evil.example/x)">styled</div>',
      "[ok](https://example.com/ok)",
      "| a | b |\n|--:|:-:|\n| 1 | 2 |",
    ].join("\n\n");
    await w.send(
      { type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [{ sessionUpdate: "agent_message_chunk", content: text(hostile) }] },
    );
    await w.update(S, { sessionUpdate: "agent_message_chunk", content: text("\n\n<img src=y onerror=\"window.__pwned='live'\">") });
    await p.locator(".entry.agent").waitFor();
    await w.settle();
    const stream = p.locator(".stream");
    const found = await stream.evaluate((el) => ({
      pwned: window.__pwned ?? null,
      scripts: el.querySelectorAll("script, iframe, svg:not(.icon), object, embed, style").length,
      handlers: Array.from(el.querySelectorAll("*")).flatMap((n) => n.getAttributeNames().filter((a) => a.startsWith("on"))),
      styled: el.querySelectorAll("[style]").length,
      imgs: Array.from(el.querySelectorAll("img"), (i) => i.getAttribute("src")),
      hrefs: Array.from(el.querySelectorAll("a"), (a) => a.getAttribute("href")),
      aligned: Array.from(el.querySelectorAll("th"), (t) => t.className),
    }));
    assert.equal(found.pwned, null, "no handler ran");
    assert.equal(found.scripts, 0);
    assert.deepEqual(found.handlers, []);
    assert.equal(found.styled, 0);
    assert.deepEqual(found.imgs, [], "no images load from elsewhere");
    assert.ok(found.hrefs.every((h) => h === null || /^https:/.test(h)), `hrefs: ${found.hrefs}`);
    assert.ok(found.hrefs.includes("https://example.com/ok"));
    assert.ok(found.hrefs.includes("https://evil.example/track.png"), "a remote image becomes a plain link");
    assert.deepEqual(found.aligned, ["align-right", "align-center"], "table alignment kept as classes");
    // The raw HTML shows as text.
    assert.match(await stream.innerText(), /<img src=x onerror=/);
    assert.match(await stream.innerText(), /<script>/);
    assert.deepEqual(await w.csp(), []);
    // Tool titles and output are text, never markup.
    await w.update(S, {
      sessionUpdate: "tool_call",
      toolCallId: "x",
      title: "<img src=z onerror=\"window.__pwned='title'\">",
      kind: "other",
      status: "completed",
      content: [{ type: "content", content: text("<script>window.__pwned='out'</script>") }],
    });
    await p.locator(".tool").waitFor();
    assert.equal(await p.locator(".tool img, .tool script").count(), 0);
    assert.equal(await p.evaluate(() => window.__pwned ?? null), null);
    await w.close();
  });

  test("malformed messages are dropped and the rest still shows", async () => {
    w = await page();
    const p = w.page;
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] });
    await w.send(null, "text", 42, { no: "type" }, { type: "update", sessionId: S }, { type: "update", sessionId: S, update: "x" });
    await w.update(
      S,
      { sessionUpdate: "agent_message_chunk", content: null },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: 7 } },
      { sessionUpdate: "plan", entries: "not a list" },
      { sessionUpdate: "plan", entries: [null, { content: "kept step", status: "pending" }] },
      { sessionUpdate: "tool_call", title: "no id" },
      { sessionUpdate: "tool_call", toolCallId: "t1", locations: [null, { uri: 5 }], content: [null] },
      { sessionUpdate: "usage_update", inputTokens: "many", outputTokens: 3 },
      { sessionUpdate: "notice", message: null },
      { sessionUpdate: "no_such_kind" },
      { sessionUpdate: "agent_message_chunk", content: text("still here") },
    );
    await p.getByText("still here").waitFor();
    assert.equal(await p.locator(".plan-item").textContent(), "kept step (to do)");
    assert.equal(await p.locator(".tool").count(), 1);
    assert.equal(await p.locator(".tool .location").count(), 0);
    assert.equal(await p.locator(".usage").innerText(), "0 in · 3 out");
    assert.equal(await p.locator(".entry").count(), 4);
    assert.deepEqual(w.errors, []);
    await w.close();
  });

  test("code blocks copy and insert", async () => {
    w = await page();
    const p = w.page;
    await w.send({
      type: "session",
      sessionId: S,
      title: "",
      model: "",
      state: "idle",
      updates: [{ sessionUpdate: "agent_message_chunk", content: text("Run:\n\n```go\nfmt.Println(1)\n```\n") }],
    });
    const block = p.locator(".code-block");
    await block.waitFor();
    assert.equal(await block.locator(".code-lang").innerText(), "go");
    await block.getByRole("button", { name: "Copy code" }).click();
    assert.deepEqual(await w.waitPosted("copy"), { type: "copy", text: "fmt.Println(1)" });
    await block.getByRole("button", { name: "Insert code at cursor" }).click();
    assert.deepEqual(await w.waitPosted("insertAtCursor"), { type: "insertAtCursor", text: "fmt.Println(1)" });
    await w.close();
  });

  test("a streamed answer renders as the same answer loaded at once", async () => {
    const doc = [
      "# Plan",
      "",
      "Some *text* with `code`.",
      "",
      "- one",
      "- two",
      "",
      "  continued two",
      "",
      "```js",
      "const a = 1;",
      "",
      "",
      "const b = 2;",
      "```",
      "",
      "1. first",
      "",
      "2. second",
      "",
      "> quote",
      "",
      "    indented code",
      "",
      "~~~",
      "```",
      "~~~",
      "",
      "Here is the fix:",
      "```go",
      "func a() {}",
      "",
      "func b() {}",
      "```",
      "After the fence, no blank line.",
      "- item",
      "```",
      "not in the item",
      "````",
      "``` not`a fence",
      "",
      "Last line.",
    ].join("\n");
    w = await page();
    const p = w.page;
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [{ sessionUpdate: "agent_message_chunk", content: text(doc) }] });
    await p.locator(".entry.agent").waitFor();
    const shape = () =>
      p.locator(".entry.agent .markdown").evaluate((el) => {
        const out = [];
        const walk = (n) => {
          for (const c of n.children) {
            if (c.classList.contains("md-segment")) walk(c);
            else if (c.classList.contains("code-block")) out.push("PRE:" + c.querySelector("pre").textContent);
            else out.push(c.tagName + ":" + c.textContent.replace(/\s+/g, " ").trim());
          }
        };
        walk(el);
        return out;
      });
    const whole = await shape();
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] });
    await p.locator(".entry.agent").waitFor({ state: "detached" });
    // Chunks of 3 characters, a frame's worth at a time.
    for (let i = 0; i < doc.length; i += 30) {
      const chunks = [];
      for (let j = i; j < Math.min(i + 30, doc.length); j += 3) chunks.push({ sessionUpdate: "agent_message_chunk", content: text(doc.slice(j, j + 3)) });
      await w.update(S, ...chunks);
      await w.settle();
    }
    const segments = await p.locator(".entry.agent .md-segment").count();
    assert.ok(segments > 3, `the answer was rendered in ${segments} segments`);
    const streamed = await shape();
    // The fenced block keeps its blank lines; the list continuation stays in its item.
    assert.ok(whole.some((s) => s.startsWith("PRE:") && s.includes("const a = 1;\n\n\nconst b = 2;")));
    // A loose ordered list streams as one list per item (the second
    // starting at 2); everything else is the same.
    assert.deepEqual(
      streamed,
      whole.flatMap((s) => (s === "OL:first second" ? ["OL:first", "OL:second"] : [s])),
    );
    assert.equal(await p.locator(".entry.agent ol").nth(1).getAttribute("start"), "2");
    await w.close();
  });

  test("a code block being written shows as code at once", async () => {
    w = await page();
    const p = w.page;
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] });
    await w.update(S, { sessionUpdate: "agent_message_chunk", content: text("Intro:\n```py\nprint(1)\nprint(") });
    const code = p.locator(".entry.agent .code-block code");
    await code.waitFor();
    assert.equal(await code.textContent(), "print(1)\nprint(");
    assert.equal(await p.locator(".entry.agent .code-lang").innerText(), "py");
    assert.equal(await p.locator(".entry.agent p").innerText(), "Intro:");
    await w.update(S, { sessionUpdate: "agent_message_chunk", content: text("2)\n") });
    await p.waitForFunction(() => document.querySelector(".entry.agent .code-block code").textContent === "print(1)\nprint(2)\n");
    await w.update(S, { sessionUpdate: "agent_message_chunk", content: text("```\nDone <b>.") });
    await p.getByText("Done <b>.").waitFor();
    assert.equal(await p.locator(".entry.agent .code-block").count(), 1);
    assert.equal(await p.locator(".entry.agent b").count(), 0);
    await w.close();
  });

  test("a loaded session replaces the stream", async () => {
    w = await page();
    const p = w.page;
    await w.send({ type: "session", sessionId: "a", title: "A", model: "", state: "idle", updates: [{ sessionUpdate: "agent_message_chunk", content: text("from A") }] });
    await p.getByText("from A").waitFor();
    await w.send({
      type: "session",
      sessionId: "b",
      title: "B title",
      model: "",
      state: "idle",
      updates: [
        { sessionUpdate: "user_message_chunk", content: text("question B") },
        { sessionUpdate: "agent_thought_chunk", content: text("pondering") },
        { sessionUpdate: "agent_message_chunk", content: text("answer B") },
        { sessionUpdate: "tool_call", toolCallId: "t", title: "ls", kind: "execute", status: "completed" },
      ],
    });
    await p.getByText("answer B").waitFor();
    assert.equal(await p.getByText("from A").count(), 0);
    assert.equal(await p.locator(".entry").count(), 4);
    assert.equal(await p.locator(".session-title").innerText(), "B title");
    assert.equal(await p.locator(".thought-label").innerText(), "Thought", "a thought in history is finished");
    // Updates for a session not shown are ignored.
    await w.update("a", { sessionUpdate: "agent_message_chunk", content: text("late A") });
    await w.update("b", { sessionUpdate: "agent_message_chunk", content: text(" more B") });
    await p.getByText("more B").waitFor();
    assert.equal(await p.getByText("late A").count(), 0);
    await w.close();
  });

  test("the stream follows its end until the user scrolls up", async () => {
    w = await page();
    const p = w.page;
    await p.setViewportSize({ width: 400, height: 300 });
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] });
    const gap = () => p.locator(".scroll").evaluate((s) => s.scrollHeight - s.scrollTop - s.clientHeight);
    for (let i = 0; i < 40; i++) await w.update(S, { sessionUpdate: "agent_message_chunk", content: text(`paragraph ${i}\n\n`) });
    await p.getByText("paragraph 39").waitFor();
    await p.waitForFunction(() => {
      const s = document.querySelector(".scroll");
      return s.scrollHeight > s.clientHeight * 2 && s.scrollHeight - s.scrollTop - s.clientHeight < 2;
    });
    // A scroll event that arrives after more text (the position it reports
    // is no longer the end) does not stop the following.
    await p.locator(".stream").evaluate((el) => {
      const filler = document.createElement("div");
      filler.className = "entry";
      filler.textContent = "x";
      filler.style.height = "400px";
      el.append(filler);
      document.querySelector(".scroll").dispatchEvent(new Event("scroll"));
    });
    await w.update(S, { sessionUpdate: "notice", level: "info", message: "after the late scroll event" });
    await p.getByText("after the late scroll event").waitFor();
    await p.waitForFunction(() => {
      const s = document.querySelector(".scroll");
      return s.scrollHeight - s.scrollTop - s.clientHeight < 2;
    });
    // Scrolled up, the view stays put while text arrives.
    await p.locator(".scroll").evaluate((s) => (s.scrollTop = 0));
    await w.settle();
    for (let i = 40; i < 60; i++) await w.update(S, { sessionUpdate: "agent_message_chunk", content: text(`paragraph ${i}\n\n`) });
    await p.getByText("paragraph 59").waitFor();
    await w.settle();
    assert.equal(await p.locator(".scroll").evaluate((s) => s.scrollTop), 0);
    assert.ok((await gap()) > 100);
    // A terminal shows its newest output.
    await p.locator(".scroll").evaluate((s) => (s.scrollTop = s.scrollHeight));
    await w.settle();
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i}`).join("\n");
    await w.update(S, { sessionUpdate: "tool_call", toolCallId: "t", title: "seq 200", kind: "execute", status: "completed", content: [{ type: "terminal", output: lines }] });
    const box = p.locator(".terminal-box");
    await box.waitFor();
    const visible = await box.evaluate((el) => {
      const r = el.getBoundingClientRect();
      const range = document.createRange();
      const textNode = el.querySelector(".terminal").firstChild;
      range.setStart(textNode, textNode.length - 3);
      range.setEnd(textNode, textNode.length);
      const last = range.getBoundingClientRect();
      return last.top >= r.top && last.bottom <= r.bottom + 1 && el.scrollHeight > el.clientHeight;
    });
    assert.ok(visible, "the last line of a long output is in view");
    await w.close();
  });

  test("dark theme variables are followed", async () => {
    w = await page({ theme: "dark" });
    const p = w.page;
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [{ sessionUpdate: "agent_message_chunk", content: text("[link](https://example.com)") }] });
    await p.locator(".entry.agent a").waitFor();
    const colors = await p.evaluate(() => ({
      body: getComputedStyle(document.body).color,
      bg: getComputedStyle(document.body).backgroundColor,
      link: getComputedStyle(document.querySelector(".entry.agent a")).color,
    }));
    assert.deepEqual(colors, { body: "rgb(204, 204, 204)", bg: "rgb(24, 24, 24)", link: "rgb(77, 170, 252)" });
    assert.deepEqual(await w.csp(), []);
    await w.close();
  });
});
