import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "./stub/vscode";
import { record, testing } from "./stub/vscode";
import { chipFor, fixProblemsPrompt } from "../src/context";
import { StatusBar, statusText } from "../src/status";
import { html, ChatViewProvider } from "../src/panel";

function file(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "darman-ctx-"));
  const f = path.join(dir, "main.go");
  fs.writeFileSync(f, "package main\n\nfunc main() {\n\tprintln(1)\n}\n");
  return f;
}

test("the context chip is the selection with its lines, or the whole file", () => {
  testing.reset();
  const f = file();
  const uri = vscode.Uri.file(f).toString();
  assert.deepEqual(chipFor(testing.openEditor(f) as never), { uri, label: "main.go" });
  assert.deepEqual(chipFor(testing.openEditor(f, [2, 0, 4, 1]) as never), {
    uri,
    label: "main.go:3-5",
    range: { start: { line: 2, character: 0 }, end: { line: 4, character: 1 } },
  });
  // Whole lines selected end at column 0 of the next line, which is not part of it.
  assert.equal(chipFor(testing.openEditor(f, [2, 0, 4, 0]) as never)?.label, "main.go:3-4");
  assert.equal(chipFor(testing.openEditor(f, [3, 1, 3, 8]) as never)?.label, "main.go:4");
  assert.equal(chipFor(undefined), null);
});

test("fix problems lists the errors and warnings by line, and nothing for hints alone", () => {
  const err = new vscode.Diagnostic(new vscode.Range(5, 1, 5, 4), "undefined: x", vscode.DiagnosticSeverity.Error);
  err.source = "compiler";
  err.code = { value: "UndeclaredName", target: vscode.Uri.parse("https://pkg.go.dev") };
  const warn = new vscode.Diagnostic(new vscode.Range(1, 0, 1, 3), "unused variable", vscode.DiagnosticSeverity.Warning);
  const hint = new vscode.Diagnostic(new vscode.Range(0, 0, 0, 1), "could be simpler", vscode.DiagnosticSeverity.Hint);
  assert.equal(
    fixProblemsPrompt("cmd/main.go", [err, hint, warn] as never),
    "Fix the problems in cmd/main.go:\n- line 2, warning: unused variable\n- line 6, error compiler(UndeclaredName): undefined: x",
  );
  assert.equal(fixProblemsPrompt("cmd/main.go", [hint] as never), null);
});

test("the status bar shows the model, a spinner while turns run, and a warning when darman is down", () => {
  testing.reset();
  assert.deepEqual(statusText({ model: "anthropic/claude-sonnet-4-5", running: 0 }), {
    text: "$(comment-discussion) anthropic/claude-sonnet-4-5",
    tooltip: "darman: new turns use anthropic/claude-sonnet-4-5. Click to open the chat.",
    warning: false,
  });
  assert.equal(statusText({ model: "m", running: 2 }).text, "$(loading~spin) m");
  const on = statusText({ model: "m", running: 0, sandbox: { active: true, summary: "sandbox: landlock (ABI 7): network off" } });
  assert.equal(on.text, "$(comment-discussion) m");
  assert.match(on.tooltip, /\nsandbox: landlock \(ABI 7\)/);
  const off = statusText({ model: "m", running: 0, sandbox: { active: false, summary: "sandbox: off — commands run unsandboxed (no Landlock)" } });
  assert.equal(off.text, "$(unlock) $(comment-discussion) m");
  assert.match(off.tooltip, /run unsandboxed/);
  assert.match(statusText({ model: "m", running: 2 }).tooltip, /2 turns are running/);
  const bar = new StatusBar("darman.chat.focus");
  const item = record.statusItems[0];
  assert.equal(item.visible, true);
  assert.equal(item.command, "darman.chat.focus");
  bar.show({ model: "m", running: 0, error: "darman is not installed" });
  assert.equal(item.text, "$(warning) darman");
  assert.match(String(item.tooltip), /not running: darman is not installed/);
  assert.equal(item.backgroundColor?.id, "statusBarItem.warningBackground");
  bar.show({ model: "m", running: 1 });
  assert.equal(item.backgroundColor, undefined);
});

test("the panel's page loads only dist/ files: nonce'd script, no inline code, a strict CSP", () => {
  const webview = { cspSource: "vscode-resource:", asWebviewUri: (u: vscode.Uri) => vscode.Uri.parse(`vscode-resource:${u.path}`) };
  const page = html(webview as never, vscode.Uri.file("/ext") as never, "N0nce");
  const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(page)?.[1];
  assert.equal(
    csp,
    "default-src 'none'; script-src 'nonce-N0nce'; style-src vscode-resource:; img-src vscode-resource: data:; font-src vscode-resource:",
  );
  assert.match(page, /<div id="app"><\/div>/);
  assert.match(page, /<link rel="stylesheet" href="vscode-resource:\/ext\/dist\/webview.css">/);
  const scripts = [...page.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.equal(scripts.length, 1);
  assert.equal(scripts[0][1], ' nonce="N0nce" src="vscode-resource:/ext/dist/webview.js"');
  assert.equal(scripts[0][2], "", "no inline script");
  assert.doesNotMatch(page, /\s(style|on\w+)=/, "no inline styles or handlers");
});

test("resolving the view limits resources to dist/, enables scripts, and hands messages to the controller", async () => {
  const received: unknown[] = [];
  const attached: unknown[] = [];
  let onMessage: (m: unknown) => void = () => {};
  let onDispose: () => void = () => {};
  const chat = {
    attach: (v: unknown) => attached.push(v),
    detach: () => attached.push("detached"),
    handle: async (m: unknown) => void received.push(m),
  };
  let painted = 0;
  const provider = new ChatViewProvider(vscode.Uri.file("/ext") as never, chat as never, () => painted++);
  const posted: unknown[] = [];
  const view = {
    visible: true,
    webview: {
      options: {} as { enableScripts?: boolean; localResourceRoots?: vscode.Uri[] },
      html: "",
      cspSource: "vscode-resource:",
      asWebviewUri: (u: vscode.Uri) => u,
      postMessage: async (m: unknown) => (posted.push(m), true),
      onDidReceiveMessage: (l: (m: unknown) => void) => ((onMessage = l), { dispose() {} }),
    },
    onDidDispose: (l: () => void) => ((onDispose = l), { dispose() {} }),
  };
  provider.resolveWebviewView(view as never);
  assert.equal(view.webview.options.enableScripts, true);
  assert.deepEqual(
    view.webview.options.localResourceRoots?.map((u) => u.toString()),
    ["file:///ext/dist"],
  );
  const nonce = /nonce-([^']+)'/.exec(view.webview.html)?.[1] ?? "";
  assert.ok(nonce.length >= 20, `nonce ${nonce} is long and random`);
  assert.ok(view.webview.html.includes(`<script nonce="${nonce}"`));
  onMessage({ type: "webviewReady" });
  onMessage({ type: "listSessions" });
  assert.deepEqual(received, [{ type: "webviewReady" }, { type: "listSessions" }]);
  assert.equal(painted, 1, "the first message is the first paint");
  (attached[0] as { post: (m: unknown) => void }).post({ type: "error", message: "x" });
  assert.deepEqual(posted, [{ type: "error", message: "x" }]);
  onDispose();
  assert.equal(attached[1], "detached");
});
