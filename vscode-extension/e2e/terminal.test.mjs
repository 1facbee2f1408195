// End to end in a real VS Code (code-server, headless Chromium, the packaged
// VSIX, the real darman against the scripted model): a command run in
// VS Code's integrated terminal (bash, with VS Code's shell integration) is
// offered by @terminal, and the prompt sends the model the command and the
// output it printed. DARMAN_TEST_BIN names a directory with darman and
// scripted-model built.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildAll, closeCodeServer, missing, openCodeServer, removeTemp, runCommand, screenshot, startModel } from "./harness.mjs";

const skip = missing();
let tmp, cs, model, modelURL, page;

before(async () => {
  if (skip) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "darman-e2e-terminal-"));
  const bin = buildAll(tmp);
  ({ model, url: modelURL } = await startModel(bin, tmp, { steps: [{ text: "It printed the answer." }] }));
  const home = path.join(tmp, "home");
  const workspace = path.join(home, "proj");
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(
    path.join(workspace, "darman.json"),
    JSON.stringify({ model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { baseURL: modelURL, apiKey: "sk-ant-test-0123456789" } }, retry: { maxAttempts: 1 } }),
  );
  cs = await openCodeServer({
    tmp,
    home,
    workspace,
    bin,
    settings: { "terminal.integrated.defaultProfile.linux": "bash", "terminal.integrated.shellIntegration.enabled": true },
  });
  page = cs.page;
});

after(async () => {
  await closeCodeServer(cs, "code-server-terminal.log");
  model?.stdin.end();
  await removeTemp(tmp);
});

const chat = () => page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");

test("a terminal command's output reaches the model with @terminal", { skip }, async () => {
  try {
    await page.locator('.activitybar [aria-label^="darman"]').first().click();
    await chat().getByLabel("Message darman").waitFor({ timeout: 60_000 });

    await runCommand(page, "Terminal: Create New Terminal");
    const term = page.locator(".terminal-wrapper .xterm");
    await term.first().waitFor({ timeout: 30_000 });
    // The prompt is up once the shell integration has marked it.
    await page.waitForTimeout(1500);
    await term.first().click();
    // A command that takes a moment, as builds and tests do: VS Code
    // reports a command's start once the shell marks it, and an instant
    // one may be over (its output gone by) when the extension hears of it.
    await page.keyboard.type("sleep 2; echo terminal-answer-$((6*7))");
    await page.keyboard.press("Enter");
    // xterm draws on a canvas: the shell integration's mark of the finished command says it ran.
    await page.locator(".terminal-command-decoration").first().waitFor({ timeout: 30_000 });
    await page.waitForTimeout(3000);

    const box = chat().getByLabel("Message darman");
    await box.click();
    await box.pressSequentially("@term");
    await chat().getByRole("option", { name: /@terminal/ }).waitFor({ timeout: 30_000 });
    await page.keyboard.press("Enter");
    await chat().getByRole("list", { name: "Context sent with the prompt" }).getByText("@terminal").waitFor();
    await box.pressSequentially("what did it print?");
    await box.press("Enter");
    await chat().getByText("It printed the answer.").waitFor({ timeout: 60_000 });
    // The user's message is what was typed and the attachment by name; the output is the model's.
    const said = await chat().locator(".entry.user").last().innerText();
    assert.match(said, /what did it print\?[\s\S]*@Terminal/, `the user's message: ${said}`);
    assert.ok(!said.includes("terminal-answer-42"), `the output is not in the user's message: ${said}`);
    await screenshot(page, "terminal-reference");

    const calls = await (await fetch(`${modelURL}/llmtest/calls`)).json();
    const body = JSON.stringify(calls.at(-1));
    assert.ok(body.includes("$ sleep 2; echo terminal-answer-$((6*7))"), `the command line: ${body.slice(0, 1500)}`);
    assert.ok(body.includes("terminal-answer-42"), `its output: ${body.slice(body.indexOf("$ sleep"), body.indexOf("$ sleep") + 400)}`);
    assert.ok(!body.includes("\\u001b"), "no escape sequence reaches the model");
  } catch (err) {
    await screenshot(page, "terminal-failure").catch(() => {});
    throw err;
  }
});
