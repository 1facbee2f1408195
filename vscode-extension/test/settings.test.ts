import { test } from "node:test";
import assert from "node:assert/strict";
import * as vscode from "./stub/vscode";
import { testing } from "./stub/vscode";
import { serverSettings, SettingsSync } from "../src/settings";
import { configurationAnswer, DarmanOptIns } from "../src/client";

test("darman.* settings the user set go to the server; the extension's own and VS Code's defaults do not", () => {
  testing.reset();
  testing.setSetting("darman.path", { globalValue: "/opt/darman" });
  testing.setSetting("darman.trace.server", { globalValue: "verbose" });
  testing.setSetting("darman.model", { defaultValue: "" });
  testing.setSetting("darman.codeActions", { defaultValue: [] }); // declared, never set
  testing.setSetting("darman.permission", { globalValue: { bash: { "git *": "allow" } } });
  testing.setSetting("darman.provider", {
    globalValue: { anthropic: { apiKey: "user" } },
    workspaceValue: { anthropic: { baseURL: "http://127.0.0.1:9" } },
  });
  testing.setSetting("darman.retry", { workspaceValue: { maxAttempts: 2 } }); // not declared by the extension
  assert.deepEqual(serverSettings(vscode.workspace.getConfiguration("darman")), {
    permission: { bash: { "git *": "allow" } },
    provider: { anthropic: { baseURL: "http://127.0.0.1:9" } }, // the workspace's value wins, as in VS Code
    retry: { maxAttempts: 2 },
  });
});

test("darman.model goes as model when set, and not when empty", () => {
  testing.reset();
  testing.setSetting("darman.model", { globalValue: "" });
  assert.deepEqual(serverSettings(vscode.workspace.getConfiguration("darman")), {});
  testing.setSetting("darman.model", { globalValue: "anthropic/claude-sonnet-4-5" });
  assert.deepEqual(serverSettings(vscode.workspace.getConfiguration("darman")), { model: "anthropic/claude-sonnet-4-5" });
});

test("workspace/configuration for the darman section answers the server's settings, other sections VS Code's", () => {
  const answers = configurationAnswer(
    [{ section: "go" }, { section: "darman" }, {}],
    () => ({ model: "a/b" }),
    (i) => `vscode-${i}`,
  );
  assert.deepEqual(answers, ["vscode-0", { model: "a/b" }, "vscode-2"]);
});

test("the client declares every experimental.darman opt-in and keeps other experimental capabilities", () => {
  const caps: { experimental?: Record<string, unknown> } = { experimental: { other: 1 } };
  new DarmanOptIns().fillClientCapabilities(caps as never);
  assert.deepEqual(caps.experimental, {
    other: 1,
    darman: { sessionUpdates: true, requestPermission: true, applyEditAndSave: true, openDiff: true, elicitation: true },
  });
});

test("settings are sent again only when what darman gets changed", () => {
  testing.reset();
  testing.setSetting("darman.permission", { globalValue: { edit: "ask" } });
  const sent: unknown[] = [];
  const sync = new SettingsSync(() => serverSettings(vscode.workspace.getConfiguration("darman")), (s) => sent.push(s));
  assert.deepEqual(sync.initial(), { permission: { edit: "ask" } });
  testing.setSetting("darman.path", { globalValue: "/elsewhere/darman" });
  testing.setSetting("darman.trace.server", { globalValue: "verbose" });
  assert.equal(sync.changed(), false, "the extension's own settings do not reach darman");
  testing.setSetting("darman.permission", { globalValue: { edit: "allow" } });
  assert.equal(sync.changed(), true);
  assert.equal(sync.changed(), false, "nothing new");
  testing.setSetting("darman.model", { workspaceValue: "openai/gpt-5" });
  assert.equal(sync.changed(), true);
  assert.deepEqual(sent, [{ permission: { edit: "allow" } }, { permission: { edit: "allow" }, model: "openai/gpt-5" }]);
});
