// End to end in a real VS Code: code-server 4.139.1 (installed by `make
// deps` under ~/.cache/darman-test), the packaged VSIX installed into it,
// the real darman binary against the scripted model server, and headless
// Chromium driven by playwright-core. The test opens the darman panel,
// sends a prompt that makes the agent edit main.go, approves the
// permission in the panel, opens the diff, and checks the file on disk and
// in the editor. Screenshots go to $DARMAN_ARTIFACTS_DIR (default
// vscode-extension/e2e-artifacts/); with DARMAN_E2E_UPDATE_IMAGES=1 they
// also replace docs/images/ (shown in docs/editors.md). Timings (activation, panel first
// paint) go to timings.json there, for docs/benchmarks.md. DARMAN_TEST_BIN
// names a directory with darman and scripted-model already built.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { artifacts, buildAll, closeCodeServer, ext, missing, openCodeServer, runCommand as runCommandIn, screenshot, startModel, until, removeTemp } from "./harness.mjs";

const skip = missing();
const brokenMain = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println(undefinedGreeting)\n}\n';
const fixedMain = brokenMain.replace("undefinedGreeting", '"hello from darman"');

let tmp, workspace, marks, cs, model, page;

const shot = (name) => screenshot(page, name);

before(async () => {
  if (skip) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "darman-e2e-"));
  const bin = buildAll(tmp);

  // The scripted model: read main.go, fix it with an edit (which asks for
  // permission), answer.
  const script = {
    steps: [
      { text: "Let me look at main.go.", toolCalls: [{ name: "read", arguments: { path: "main.go" } }] },
      {
        text: "`undefinedGreeting` is not declared; I will print a string instead.",
        toolCalls: [{ name: "edit", arguments: { path: "main.go", oldString: "undefinedGreeting", newString: '"hello from darman"' } }],
      },
      {
        text: "Fixed: `main.go` now prints a greeting.\n\n```go\nfmt.Println(\"hello from darman\")\n```",
        usage: { input: 1830, output: 64 },
      },
      // The next turns of the session: "darman: Ask about selection", then
      // "darman: Fix problems in this file".
      { text: "It prints a greeting on standard output." },
      { text: "bad.json needs a value after the key." },
      // A turn that never answers, stopped with Escape.
      { text: "never sent", faults: [{ kind: "stall", times: -1 }] },
    ],
  };
  let modelURL;
  ({ model, url: modelURL } = await startModel(bin, tmp, script));

  const home = path.join(tmp, "home");
  workspace = path.join(home, "hello");
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(path.join(workspace, "go.mod"), "module example.com/hello\n\ngo 1.22\n");
  fs.writeFileSync(path.join(workspace, "main.go"), brokenMain);
  // VS Code's own JSON support reports a problem here, for "Fix problems in this file".
  fs.writeFileSync(path.join(workspace, "bad.json"), '{\n  "greeting": \n}\n');
  fs.writeFileSync(
    path.join(workspace, "darman.json"),
    JSON.stringify({ model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { baseURL: modelURL, apiKey: "sk-ant-test-0123456789" } }, retry: { maxAttempts: 1 } }),
  );
  marks = path.join(tmp, "marks.jsonl");
  cs = await openCodeServer({ tmp, home, workspace, bin, env: { DARMAN_EXTENSION_MARKS: marks } });
  page = cs.page;
});

after(async () => {
  await closeCodeServer(cs, "code-server.log");
  model?.stdin.end();
  await removeTemp(tmp);
});

/** The chat webview's document (inside two iframes). */
function chat() {
  return page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");
}

const runCommand = (title) => runCommandIn(page, title);

test("in code-server: prompt, see the proposed diff and the waiting badge, approve the edit in the panel, open the diff, see the file changed, ask about a selection, insert a code block, fix a file's problems, Ctrl+Alt+D to the box and Escape stops a turn", { skip }, async () => {
  try {
    await scenario();
  } catch (err) {
    await shot("failure").catch(() => {});
    throw err;
  }
});

async function scenario() {
  // Open main.go so the editor shows it and the panel offers it as context.
  await page.keyboard.press("Control+P");
  const quick = page.locator(".quick-input-widget input");
  await quick.waitFor();
  await quick.fill("main.go");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "main.go" }).first().waitFor();
  await page.keyboard.press("Enter");
  await page.locator(".monaco-editor .view-lines", { hasText: "undefinedGreeting" }).first().waitFor();

  // The status bar names the model darman's initialize offered.
  await page.locator(".statusbar-item", { hasText: "anthropic/claude-sonnet-4-5" }).first().waitFor({ timeout: 60_000 });

  // Open the panel from the activity bar.
  const clicked = Date.now();
  await page.locator('.activitybar [aria-label^="darman"]').first().click();
  const box = chat().getByLabel("Message darman");
  await box.waitFor({ timeout: 60_000 });
  const panelVisibleMs = Date.now() - clicked;
  await shot("panel");

  await box.fill("Fix main.go so it builds");
  await box.press("Enter");

  // The permission card: approve the edit once.
  const allow = chat().locator('button[data-option="allow_once"]');
  await allow.waitFor({ timeout: 60_000 });
  await shot("permission");
  // darman says it waits for you outside the panel too: a badge on its
  // activity-bar icon and the status bar item.
  const badge = page.locator('.activitybar .action-item:has([aria-label^="darman"]) .badge-content');
  await badge.filter({ hasText: "1" }).first().waitFor({ timeout: 30_000 });
  const waitingItem = page.locator(".statusbar-item", { hasText: "darman: waiting for you" });
  await waitingItem.first().waitFor({ timeout: 30_000 });
  assert.equal(fs.readFileSync(path.join(workspace, "main.go"), "utf8"), brokenMain, "nothing written before the answer");
  // Before approving, the card's "Open diff" shows the proposed text in
  // VS Code's diff editor: the file as it is on the left, the edit the
  // tool will write on the right.
  await chat().locator(".permission").getByRole("button", { name: /Open diff/ }).click();
  await page.locator(".monaco-diff-editor .modified .view-lines", { hasText: "hello from darman" }).first().waitFor({ timeout: 30_000 });
  await page.locator(".monaco-diff-editor .original .view-lines", { hasText: "undefinedGreeting" }).first().waitFor();
  await shot("permission-diff");
  assert.equal(fs.readFileSync(path.join(workspace, "main.go"), "utf8"), brokenMain, "opening the diff wrote nothing");
  await runCommand("View: Close All Editors");
  await allow.click();
  await waitingItem.first().waitFor({ state: "detached", timeout: 30_000 });
  assert.equal(await badge.filter({ hasText: /\d/ }).count(), 0, "answered: no badge");

  // While the turn runs the status bar item spins; its end stops it.
  // The edit is on disk (saved through the editor) and in the editor.
  await until(() => fs.readFileSync(path.join(workspace, "main.go"), "utf8") === fixedMain, "main.go to hold the fix on disk");
  await page.locator(".monaco-editor .view-lines", { hasText: "hello from darman" }).first().waitFor();
  await chat().getByText("now prints a greeting").waitFor({ timeout: 60_000 });
  // The answer's Go block is highlighted: the highlighter loads lazily
  // under VS Code's webview CSP.
  await chat().locator(".code-block code.highlighted span").first().waitFor({ timeout: 30_000 });

  // Close every editor, then the card's "Open diff" opens VS Code's diff editor.
  await runCommand("View: Close All Editors");
  await page.locator(".monaco-diff-editor").first().waitFor({ state: "detached" }).catch(() => {});
  await chat().getByRole("button", { name: /Open diff/ }).first().click();
  const diff = page.locator(".monaco-diff-editor");
  await diff.first().waitFor({ timeout: 30_000 });
  await page.locator(".monaco-diff-editor .modified .view-lines", { hasText: "hello from darman" }).first().waitFor();
  await page.locator(".monaco-diff-editor .original .view-lines", { hasText: "undefinedGreeting" }).first().waitFor();
  await shot("diff");

  // The palette: "darman: Ask about selection" with main.go selected sends
  // the question with the selection and shows the answer in the panel.
  await page.keyboard.press("Control+P");
  await quick.waitFor();
  await quick.fill("main.go");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "main.go" }).first().waitFor();
  await page.keyboard.press("Enter");
  await page.locator(".monaco-editor .view-lines", { hasText: "hello from darman" }).first().click();
  await page.keyboard.press("Control+A");
  await runCommand("darman: Ask about selection");
  const question = page.locator(".quick-input-widget input");
  await question.waitFor();
  await question.fill("What does this code do?");
  await page.keyboard.press("Enter");
  await chat().getByText("It prints a greeting on standard output.").waitFor({ timeout: 60_000 });

  // A code block's "Insert at cursor" puts its code where the cursor is.
  await page.locator(".monaco-editor .view-lines", { hasText: "hello from darman" }).first().click();
  await page.keyboard.press("Control+End");
  await chat().getByRole("button", { name: "Insert code at cursor" }).first().click();
  await until(async () => (await page.locator(".monaco-editor .view-line", { hasText: "hello from darman" }).count()) === 2, "the inserted line in the editor", 30_000);

  // "darman: Fix problems in this file" sends the file's diagnostics.
  await page.keyboard.press("Control+P");
  await quick.waitFor();
  await quick.fill("bad.json");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "bad.json" }).first().waitFor();
  await page.keyboard.press("Enter");
  await page.locator(".monaco-editor .squiggly-error").first().waitFor({ timeout: 60_000 });
  await runCommand("darman: Fix problems in this file");
  await chat().getByText("Fix the problems in bad.json").waitFor({ timeout: 60_000 });
  await chat().getByText("bad.json needs a value after the key.").waitFor({ timeout: 60_000 });

  // Ctrl+Alt+D in an editor without a selection puts the caret in the
  // chat's box; there Escape stops a running turn.
  await page.locator(".monaco-editor .view-lines").first().click();
  await page.keyboard.press("End");
  await page.keyboard.press("Control+Alt+D");
  const prompt = chat().getByLabel("Message darman");
  await until(() => prompt.evaluate((el) => el === document.activeElement && document.hasFocus()), "the caret in the chat's box", 30_000);
  await page.keyboard.type("Wait for the answer");
  await page.keyboard.press("Enter");
  await chat().getByText("darman is working").first().waitFor({ timeout: 60_000 });
  await page.keyboard.press("Escape");
  await chat().locator(".entry.cancelled").first().waitFor({ timeout: 60_000 });
  await until(() => prompt.evaluate((el) => el === document.activeElement), "the caret back in the box after the stop", 30_000);

  // Figures for docs/benchmarks.md.
  const lines = fs.existsSync(marks) ? fs.readFileSync(marks, "utf8").trim().split("\n") : [];
  const byName = Object.fromEntries(lines.map((l) => JSON.parse(l)).map((m) => [m.name, m.ms]));
  assert.ok(byName.activated !== undefined && byName.bundleEvaluated !== undefined, `the extension recorded its activation: ${lines.join(" | ")}`);
  const distSize = (f) => fs.statSync(path.join(ext, "dist", f)).size;
  // The webview's own first contentful paint, from its document's start.
  let webviewFirstPaintMs = null;
  for (const f of page.frames()) {
    if (await f.$("#app").catch(() => null)) {
      webviewFirstPaintMs = await f.evaluate(() => performance.getEntriesByType("paint").find((e) => e.name === "first-contentful-paint")?.startTime ?? null);
    }
  }
  const timings = {
    activationMs: Math.round((byName.bundleEvaluated + byName.activateBody) * 10) / 10,
    bundleEvaluatedMs: Math.round(byName.bundleEvaluated * 10) / 10,
    activateBodyMs: Math.round(byName.activateBody * 10) / 10,
    webviewFirstContentfulPaintMs: webviewFirstPaintMs === null ? null : Math.round(webviewFirstPaintMs),
    panelFirstPaintMs: byName.panelFirstPaint !== undefined && byName.panelResolved !== undefined ? Math.round((byName.panelFirstPaint - byName.panelResolved) * 10) / 10 : null,
    panelVisibleFromClickMs: panelVisibleMs,
    serverStartedMs: byName.serverStarted,
    bytes: { "extension.js": distSize("extension.js"), "lsp.js": distSize("lsp.js"), "webview.js": distSize("webview.js"), "webview.css": distSize("webview.css"), vsix: fs.statSync(path.join(ext, "darman.vsix")).size },
  };
  fs.mkdirSync(artifacts, { recursive: true });
  fs.writeFileSync(path.join(artifacts, "timings.json"), JSON.stringify(timings, null, 2) + "\n");
  console.log(`# e2e timings: ${JSON.stringify(timings)}`);
}
