// The webview bundle in headless Chromium: buildWebview into a temp dir, a
// page served from 127.0.0.1 under a CSP as strict as the host's, and an
// acquireVsCodeApi stub that records what the webview posts and keeps its
// state in localStorage (so a reload gets it back, as a re-shown view does).
import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";
import { buildWebview } from "../build.mjs";

export const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";

// skip is the reason these tests cannot run here, or false.
export const skip = existsSync(chromiumPath)
  ? false
  : `${chromiumPath} is missing: install it with \`make deps\` (apt-get install -y chromium)`;

const chromiumArgs = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

const nonce = "dGVzdC1ub25jZQ";

const stub = `(() => {
  const key = "vscode-state";
  window.__posted = [];
  window.__csp = [];
  document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(e.violatedDirective + " " + e.blockedURI + " " + (e.sample || "")));
  let acquired = false;
  window.acquireVsCodeApi = () => {
    if (acquired) throw new Error("An instance of the VS Code API has already been acquired");
    acquired = true;
    return Object.freeze({
      postMessage(m) { window.__posted.push(JSON.parse(JSON.stringify(m))); },
      getState() { const s = localStorage.getItem(key); return s === null ? undefined : JSON.parse(s); },
      setState(s) { localStorage.setItem(key, JSON.stringify(s)); return s; },
    });
  };
})();`;

function page(origin, theme) {
  const csp = [
    "default-src 'none'",
    `style-src ${origin}`,
    `script-src 'nonce-${nonce}'`,
    `img-src ${origin} data:`,
    `font-src ${origin}`,
  ].join("; ");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/webview.css">
${theme ? `<link rel="stylesheet" href="/theme-${theme}.css">` : ""}
</head><body class="vscode-${theme || "light"}"><div id="app"></div>
<script nonce="${nonce}" src="/stub.js"></script>
<script nonce="${nonce}" src="/webview.js"></script>
</body></html>`;
}

// VS Code's Light Modern theme's variables that the panel's colours use.
const lightTheme = `html {
  --vscode-foreground: #3b3b3b;
  --vscode-descriptionForeground: #3b3b3b;
  --vscode-sideBar-background: #f8f8f8;
  --vscode-editor-background: #ffffff;
  --vscode-errorForeground: #f85149;
  --vscode-editorWarning-foreground: #bf8803;
  --vscode-editorInfo-foreground: #1a85ff;
  --vscode-testing-iconPassed: #73c991;
  --vscode-testing-iconFailed: #f14c4c;
  --vscode-gitDecoration-addedResourceForeground: #587c0c;
  --vscode-gitDecoration-deletedResourceForeground: #ad0707;
  --vscode-textLink-foreground: #005fb8;
  --vscode-focusBorder: #005fb8;
}`;

// A few of VS Code's dark theme variables, as VS Code sets them on <html>.
const darkTheme = `html {
  --vscode-foreground: #cccccc;
  --vscode-sideBar-background: #181818;
  --vscode-editor-background: #1f1f1f;
  --vscode-input-background: #313131;
  --vscode-input-foreground: #cccccc;
  --vscode-button-background: #0078d4;
  --vscode-button-foreground: #ffffff;
  --vscode-textLink-foreground: #4daafc;
  --vscode-errorForeground: #f85149;
}`;

// serve builds the bundle and serves the test page; close() stops it.
export async function serve({ minify = true } = {}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "darman-webview-"));
  await buildWebview({ minify, outdir: dir });
  const files = {
    "/webview.js": ["text/javascript", await readFile(path.join(dir, "webview.js"))],
    "/webview.css": ["text/css", await readFile(path.join(dir, "webview.css"))],
    "/highlight.js": ["text/javascript", await readFile(path.join(dir, "highlight.js"))],
    "/stub.js": ["text/javascript", stub],
    "/theme-dark.css": ["text/css", darkTheme],
    "/theme-light.css": ["text/css", lightTheme],
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    if (url.pathname === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(page(origin, url.searchParams.get("theme") ?? ""));
      return;
    }
    if (url.pathname === "/favicon.ico") {
      res.writeHead(204);
      res.end();
      return;
    }
    const f = files[url.pathname];
    if (!f) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": f[0] });
    res.end(f[1]);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    dir,
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function launch() {
  const { chromium } = await import("playwright-core");
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumArgs });
}

// open starts a page on the webview, with helpers to talk to it as the host.
export async function open(browser, origin, { theme, viewport } = {}) {
  const context = await browser.newContext(viewport ? { viewport } : {});
  const p = await context.newPage();
  const errors = [];
  p.on("pageerror", (e) => errors.push(String(e)));
  p.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  await p.goto(theme ? `${origin}/?theme=${theme}` : `${origin}/`);
  await p.waitForFunction(() => window.__posted?.some((m) => m.type === "webviewReady"));
  const h = {
    page: p,
    errors,
    // send delivers host messages the way VS Code does, window message
    // events, and returns once the panel has handled them: it takes them
    // in the animation frame after they arrive (or 250 ms later when it
    // gets no frames), so a mark posted after them, and a frame after the
    // mark, come after that. Reading the page before then raced the
    // panel on a loaded machine.
    async send(...messages) {
      await p.evaluate(
        (ms) =>
          new Promise((resolve) => {
            const mark = `darman-test-mark-${Math.random()}`;
            const on = (e) => {
              if (e.data !== mark) return;
              window.removeEventListener("message", on);
              const timer = setTimeout(resolve, 300);
              requestAnimationFrame(() => setTimeout(() => (clearTimeout(timer), resolve()), 0));
            };
            window.addEventListener("message", on);
            for (const m of ms) window.postMessage(m, "*");
            window.postMessage(mark, "*");
          }),
        messages,
      );
    },
    async update(sessionId, ...updates) {
      await h.send(...updates.map((update) => ({ type: "update", sessionId, update })));
    },
    posted: () => p.evaluate(() => window.__posted),
    clearPosted: () => p.evaluate(() => (window.__posted.length = 0)),
    // waitPosted waits for a posted message of that type and returns the last.
    async waitPosted(type, timeout = 5000) {
      const handle = await p.waitForFunction((t) => window.__posted.filter((m) => m.type === t).at(-1), type, { timeout });
      return handle.jsonValue();
    },
    state: () => p.evaluate(() => JSON.parse(localStorage.getItem("vscode-state") ?? "null")),
    csp: () => p.evaluate(() => window.__csp),
    // settle waits for queued host messages to be handled (two frames).
    settle: () => p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())))),
    // shot saves the page as artifacts/panel-NAME-THEME.png (see shot()).
    shot: (name) => shot(p, `${name}-${theme || "light"}`),
    close: () => context.close(),
  };
  return h;
}

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const artifactsDir = process.env.DARMAN_ARTIFACTS_DIR || path.join(repo, "vscode-extension", "e2e-artifacts");

// shot saves a screenshot of the page in the artifacts directory, and with
// DARMAN_E2E_UPDATE_IMAGES=1 also as docs/images/panel-NAME.png (the
// states docs/editors.md shows).
export async function shot(p, name) {
  await mkdir(artifactsDir, { recursive: true });
  const file = path.join(artifactsDir, `panel-${name}.png`);
  await p.screenshot({ path: file });
  if (process.env.DARMAN_E2E_UPDATE_IMAGES === "1") await copyFile(file, path.join(repo, "docs", "images", `panel-${name}.png`));
}

export const here = path.dirname(fileURLToPath(import.meta.url));

// webview, called in a describe, serves the webview and starts Chromium
// before the suite's tests and closes both after them; it returns open for
// those tests: a new page on the webview (options as open's).
export function webview() {
  let server, browser;
  before(async () => {
    server = await serve();
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  return (options) => open(browser, server.origin, options);
}
