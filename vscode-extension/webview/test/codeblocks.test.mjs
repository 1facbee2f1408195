// Code blocks: tabs are 4 wide, and a shell block has "Run in terminal",
// which posts its commands (a transcript's "$ " prompts and output lines
// left out); other blocks do not have it.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { skip, webview } from "./harness.mjs";

const S = "ses_code";

describe("webview code blocks", { skip }, () => {
  const page = webview();

  test("shell blocks run in the terminal; tabs are 4 wide", async () => {
    const w = await page();
    const p = w.page;
    const text = "Run:\n\n```console\n$ go test ./...\nok  example.com/x 0.1s\n$ go vet ./...\n```\n\nand\n\n```go\nfunc f() {\n\treturn\n}\n```\n\n```bash\nmake build\n```\n";
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text } }] });
    const blocks = p.locator(".code-block");
    assert.equal(await blocks.count(), 3);
    assert.equal(await blocks.nth(1).getByRole("button", { name: /Run in terminal/ }).count(), 0, "a Go block is not run");
    await blocks.nth(0).getByRole("button", { name: /Run in terminal/ }).click();
    assert.deepEqual(await w.waitPosted("runInTerminal"), { type: "runInTerminal", text: "go test ./...\ngo vet ./..." });
    await blocks.nth(2).getByRole("button", { name: /Run in terminal/ }).click();
    await p.waitForFunction(() => window.__posted.filter((m) => m.type === "runInTerminal").length === 2);
    assert.equal((await w.waitPosted("runInTerminal")).text, "make build");
    assert.equal(await blocks.nth(1).locator("pre").evaluate((el) => getComputedStyle(el).tabSize), "4");
    await w.close();
  });
});
