import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "./stub/vscode";
import { testing } from "./stub/vscode";
import { followTrustGrant, initializationOptions } from "../src/trust";

test("initializationOptions carry VS Code's workspace trust beside the settings", () => {
  testing.reset();
  vscode.workspace.isTrusted = false;
  assert.deepEqual(initializationOptions({ model: "a/b" }), { darman: { model: "a/b" }, workspaceTrusted: false });
  vscode.workspace.isTrusted = true;
  assert.deepEqual(initializationOptions({}), { darman: {}, workspaceTrusted: true });
});

test("a later grant of trust sends darman.trust {editor: true} to the running server, once per grant", async () => {
  testing.reset();
  vscode.workspace.isTrusted = false;
  const sent: unknown[] = [];
  const client = { sendRequest: async (method: string, params: unknown) => void sent.push({ method, params }) };
  let running: typeof client | undefined;
  const sub = followTrustGrant(() => running, (err) => assert.fail(String(err)));
  testing.grantTrust(); // no server yet: nothing to tell
  assert.deepEqual(sent, []);
  running = client;
  testing.grantTrust();
  assert.deepEqual(sent, [{ method: "workspace/executeCommand", params: { command: "darman.trust", arguments: [{ editor: true }] } }]);
  sub.dispose();
  testing.grantTrust();
  assert.equal(sent.length, 1);
});

test("package.json declares Restricted Mode as limited, with the widening settings restricted", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8"));
  const u = pkg.capabilities?.untrustedWorkspaces;
  assert.equal(u?.supported, "limited");
  for (const key of ["darman.path", "darman.provider", "darman.permission"]) {
    assert.ok(u.restrictedConfigurations.includes(key), key);
    assert.ok(key in pkg.contributes.configuration.properties || pkg.contributes.configuration.some?.((c: { properties: object }) => key in c.properties), key);
  }
});
