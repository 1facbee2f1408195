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

describe("webview code blocks: apply to file", { skip }, () => {
  const page = webview();

  for (const theme of ["light", "dark"]) {
  test(`a block whose fence names a file applies to it, while streamed and once settled; one that names none applies to the selection; shell blocks have no Apply (${theme})`, async () => {
    const w = await page({ theme, viewport: { width: 460, height: 640 } });
    const p = w.page;
    // Streamed: the block is still open (no closing fence yet).
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "running", updates: [] });
    await w.send({ type: "update", sessionId: S, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Here:\n\n```go:cmd/hello/main.go\npackage main\n" } } });
    await p.getByRole("button", { name: "Apply to cmd/hello/main.go" }).click();
    assert.deepEqual(await w.waitPosted("applyToFile"), { type: "applyToFile", text: "package main", file: "cmd/hello/main.go" });
    assert.equal(await p.locator(".code-block .code-lang").first().innerText(), "go");
    const text =
      "```go title=\"main.go\"\npackage main\n\nfunc main() {}\n```\n\n```ts src/a.ts\nexport const a = 1;\n```\n\n```go\nfunc f() {}\n```\n\n```sh\nmake\n```\n";
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text } }] });
    await p.waitForFunction(() => document.querySelector(".code-block code")?.classList.contains("highlighted"), null, { timeout: 15000 });
    await w.shot("code-blocks");
    await p.getByRole("button", { name: "Apply to main.go" }).click();
    await p.waitForFunction(() => window.__posted.filter((m) => m.type === "applyToFile").length === 2);
    assert.deepEqual(await w.waitPosted("applyToFile"), { type: "applyToFile", text: "package main\n\nfunc main() {}", file: "main.go" });
    await p.getByRole("button", { name: "Apply to src/a.ts" }).click();
    await p.waitForFunction(() => window.__posted.filter((m) => m.type === "applyToFile").length === 3);
    assert.equal((await w.waitPosted("applyToFile")).file, "src/a.ts");
    await p.locator(".code-block").nth(2).getByRole("button", { name: "Apply to the selection" }).click();
    await p.waitForFunction(() => window.__posted.filter((m) => m.type === "applyToFile").length === 4);
    assert.deepEqual(await w.waitPosted("applyToFile"), { type: "applyToFile", text: "func f() {}" });
    assert.equal(await p.locator(".code-block").nth(3).getByRole("button", { name: /^Apply/ }).count(), 0, "a shell block is run, not applied");
    await w.close();
  });
  }
});

describe("webview syntax highlighting", { skip }, () => {
  const page = webview();

  test("a Go block is coloured by Light+ and again by Dark+ when the theme changes; unknown languages stay plain; Copy gives the text", async () => {
    const w = await page();
    const p = w.page;
    const go = "package main\n\nfunc main() {\n\treturn // done\n}";
    const text = "```go\n" + go + "\n```\n\n```klingon\nqapla'\n```\n";
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text } }] });
    const code = p.locator(".code-block code").first();
    await p.waitForFunction(() => document.querySelector(".code-block code")?.classList.contains("highlighted"), null, { timeout: 15000 });
    const color = (word) =>
      code.evaluate((el, word) => {
        const span = [...el.querySelectorAll("span")].find((s) => s.textContent.trim() === word);
        return span ? getComputedStyle(span).color : "";
      }, word);
    const light = await color("func");
    assert.equal(light, "rgb(0, 0, 255)", "Light+ keywords are blue");
    assert.notEqual(await color("main"), light, "a name is not a keyword");
    assert.equal((await code.innerText()).replace(/\n$/, ""), go, "the text is unchanged");
    assert.equal(await p.locator(".code-block code").nth(1).locator("span").count(), 0, "an unknown language is plain");
    await p.evaluate(() => document.body.classList.replace("vscode-light", "vscode-dark"));
    await p.waitForFunction(() => {
      const s = [...document.querySelectorAll(".code-block code span")].find((x) => x.textContent.trim() === "func");
      return s && getComputedStyle(s).color !== "rgb(0, 0, 255)";
    });
    assert.equal(await color("func"), "rgb(86, 156, 214)", "Dark+ keywords");
    await p.locator(".code-block").first().getByRole("button", { name: "Copy code" }).click();
    assert.equal((await w.waitPosted("copy")).text, go);
    assert.deepEqual(await w.csp(), [], "no CSP violation loading the highlighter");
    await w.close();
  });

  test("a panel without code blocks never loads the highlighter", async () => {
    const w = await page();
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "No code here, `inline` only." } }] });
    await w.settle();
    assert.equal(await w.page.evaluate(() => performance.getEntriesByType("resource").some((r) => r.name.endsWith("/highlight.js"))), false);
    await w.close();
  });
});
