// esbuild strips types without checking them; this runs the TypeScript
// compiler over the webview and the shared protocol it imports.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { here } from "./harness.mjs";

const tsc = path.resolve(here, "../../../node_modules/typescript/bin/tsc");
const skip = existsSync(tsc) ? false : `${tsc} is missing: run \`npm ci\` at the repository root (make deps)`;

test("the webview type-checks", { skip }, async () => {
  const project = path.resolve(here, "../tsconfig.json");
  const out = await new Promise((resolve) =>
    execFile(process.execPath, [tsc, "-p", project], { timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (err.code ?? 1) : 0, text: stdout + stderr }),
    ),
  );
  assert.equal(out.code, 0, out.text);
});
