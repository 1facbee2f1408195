// End to end in a real VS Code (code-server with Workspace Trust on,
// headless Chromium, the packaged VSIX, the real darman against the
// scripted model): a folder whose darman.json names the provider opens in
// Restricted Mode; darman says the editor does not trust it, and a prompt
// from the panel never reaches the folder's provider (the model gets no
// request; the panel says why). Once the user trusts the folder in VS
// Code's own trust editor, the same prompt reaches it and its answer shows
// in the panel, with no restart.
// DARMAN_TEST_BIN names a directory with darman and scripted-model built.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildAll, closeCodeServer, missing, openCodeServer, removeTemp, runCommand, screenshot, startModel, until } from "./harness.mjs";

const skip = missing();
let tmp, cs, model, modelURL, page;

before(async () => {
  if (skip) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "darman-e2e-trust-"));
  const bin = buildAll(tmp);
  ({ model, url: modelURL } = await startModel(bin, tmp, { steps: [{ text: "Hello from the folder's own model." }] }));
  const home = path.join(tmp, "home");
  const workspace = path.join(home, "cloned");
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(path.join(workspace, "README.md"), "# a cloned project\n");
  fs.writeFileSync(
    path.join(workspace, "darman.json"),
    JSON.stringify({ model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { baseURL: modelURL, apiKey: "sk-ant-test-0123456789" } }, retry: { maxAttempts: 1 } }),
  );
  cs = await openCodeServer({ tmp, home, workspace, bin, workspaceTrust: true });
  page = cs.page;
});

after(async () => {
  await closeCodeServer(cs, "code-server-trust.log");
  model?.stdin.end();
  await removeTemp(tmp);
});

const chat = () => page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");
const calls = async () => ((await (await fetch(`${modelURL}/llmtest/calls`)).json()) ?? []).length;

test("an untrusted folder's provider is not used until the user trusts the folder in VS Code", { skip }, async () => {
  try {
    // Restricted Mode: VS Code says so, and darman does too.
    await page.getByText("Restricted Mode").first().waitFor({ timeout: 60_000 });
    await page.getByText(/darman: the editor does not trust this folder/).first().waitFor({ timeout: 60_000 });

    await page.locator('.activitybar [aria-label^="darman"]').first().click();
    const box = chat().getByLabel("Message darman");
    await box.waitFor({ timeout: 60_000 });
    await box.fill("hi");
    await box.press("Enter");
    await chat().getByText(/no API key for Anthropic/).first().waitFor({ timeout: 60_000 });
    await screenshot(page, "untrusted");
    assert.equal(await calls(), 0, "the folder's provider got a request while the folder was untrusted");

    // The user trusts the folder in VS Code's trust editor.
    await runCommand(page, "Workspaces: Manage Workspace Trust");
    await page.locator(".workspace-trust-editor").getByRole("button", { name: /^Trust( Folder)?$/ }).first().click();
    await until(async () => !(await page.getByText("Restricted Mode").first().isVisible().catch(() => false)), "Restricted Mode to end", 30_000);

    // The same prompt now reaches the folder's provider, without a
    // restart of the window. darman starts its agent again on the grant:
    // a prompt sent while it does fails with that, and is sent again.
    const answer = chat().getByText("Hello from the folder's own model.").first();
    await until(async () => {
      await box.fill("hi");
      await box.press("Enter");
      return answer.waitFor({ timeout: 15_000 }).then(() => true, () => false);
    }, "the answer of the folder's model after trust", 90_000);
    assert.ok((await calls()) >= 1, "no request reached the folder's provider after trust");
    await screenshot(page, "trusted");
  } catch (err) {
    await screenshot(page, "trust-failure").catch(() => {});
    throw err;
  }
});
