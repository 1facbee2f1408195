// End to end in a real VS Code (code-server, headless Chromium, the packaged
// VSIX, the real darman against the scripted model): a code block of the
// answer whose fence names main.go is applied to it with "Apply to
// main.go" through darman (darman.turn.apply): the permission card asks,
// VS Code's diff editor shows the proposed change before the answer (the
// file on disk unchanged), the file holds the block once allowed (saved
// through the editor), and the turn's Revert takes it back; a block naming
// a new file creates it once allowed, and one naming a file outside the
// workspace is refused. DARMAN_TEST_BIN names a directory with darman and
// scripted-model built.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildAll, closeCodeServer, missing, openCodeServer, removeTemp, screenshot, startModel, until } from "./harness.mjs";

const skip = missing();
const original = 'package main\n\nfunc main() {\n\tprintln("old greeting")\n}\n';
const block = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("applied greeting")\n}';
let tmp, cs, model, page, workspace;

before(async () => {
  if (skip) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "darman-e2e-apply-"));
  const bin = buildAll(tmp);
  let url;
  ({ model, url } = await startModel(bin, tmp, {
    steps: [
      {
        text:
          "Use fmt:\n\n```go main.go\n" + block + "\n```\n\nA new command:\n\n```go cmd/new/main.go\npackage main\n```\n\nAnd outside:\n\n```go ../outside.go\npackage outside\n```\n",
      },
    ],
  }));
  const home = path.join(tmp, "home");
  workspace = path.join(home, "hello");
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(path.join(workspace, "go.mod"), "module example.com/hello\n\ngo 1.22\n");
  fs.writeFileSync(path.join(workspace, "main.go"), original);
  fs.writeFileSync(
    path.join(workspace, "darman.json"),
    JSON.stringify({ model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { baseURL: url, apiKey: "sk-ant-test-0123456789" } }, retry: { maxAttempts: 1 } }),
  );
  // Desktop VS Code's default: in a browser (code-server) VS Code saves
  // after a delay by default, which would save the applied block itself.
  cs = await openCodeServer({ tmp, home, workspace, bin, settings: { "files.autoSave": "off" } });
  page = cs.page;
});

after(async () => {
  await closeCodeServer(cs, "code-server-apply.log");
  model?.stdin.end();
  await removeTemp(tmp);
});

const chat = () => page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");

test("a code block applied to the file it names: asked on the card with the proposed diff open, written once allowed, undone by the turn's Revert; a new file is created; a file outside the workspace is refused", { skip }, async () => {
  try {
    await page.locator('.activitybar [aria-label^="darman"]').first().click();
    const box = chat().getByLabel("Message darman");
    await box.waitFor({ timeout: 60_000 });
    await box.fill("Make main.go use fmt");
    await box.press("Enter");
    await chat().getByText("Use fmt:").waitFor({ timeout: 60_000 });

    await chat().getByRole("button", { name: "Apply to main.go" }).click();
    const allow = chat().locator('.permission button[data-option="allow_once"]');
    await allow.waitFor({ timeout: 60_000 });
    // The proposed change opens by itself in the diff editor, before the answer.
    await page.locator(".monaco-diff-editor .modified .view-lines", { hasText: "applied greeting" }).first().waitFor({ timeout: 30_000 });
    await page.locator(".monaco-diff-editor .original .view-lines", { hasText: "old greeting" }).first().waitFor();
    assert.equal(fs.readFileSync(path.join(workspace, "main.go"), "utf8"), original, "nothing is written before the answer");
    await screenshot(page, "apply-diff");
    await allow.click();
    await until(() => fs.readFileSync(path.join(workspace, "main.go"), "utf8") === block + "\n", "main.go to hold the block on disk", 30_000);

    // The turn's Revert, offered once the block is applied, takes it back.
    await chat().locator(".turn-actions .revert-turn").last().click();
    await chat().locator(".revert-confirm").click({ timeout: 30_000 });
    await until(() => fs.readFileSync(path.join(workspace, "main.go"), "utf8") === original, "the Revert to restore main.go", 30_000);

    // A reverted turn takes no more edits: Redo it (main.go's block comes
    // back with it) before applying the next block.
    await chat().locator(".revert-card .revert-redo").click({ timeout: 30_000 });
    await chat().locator(".revert-confirm").click({ timeout: 30_000 });
    await until(() => fs.readFileSync(path.join(workspace, "main.go"), "utf8") === block + "\n", "Redo to put the block back", 30_000);
    await chat().locator(".revert-close").click();

    // A file that does not exist yet is created once allowed.
    await chat().getByRole("button", { name: "Apply to cmd/new/main.go" }).click();
    await allow.waitFor({ timeout: 60_000 });
    assert.equal(fs.existsSync(path.join(workspace, "cmd")), false, "the new file is made before the answer");
    await allow.click();
    await until(() => fs.existsSync(path.join(workspace, "cmd", "new", "main.go")), "cmd/new/main.go to be created", 30_000);

    // A fence naming a file outside the workspace is refused, saying so.
    await chat().getByRole("button", { name: "Apply to ../outside.go" }).click();
    await chat().getByText(/Applying the code block failed: .*outside the workspace/).waitFor({ timeout: 30_000 });
    assert.equal(fs.existsSync(path.join(path.dirname(workspace), "outside.go")), false);
  } catch (err) {
    await screenshot(page, "apply-failure").catch(() => {});
    throw err;
  }
});
