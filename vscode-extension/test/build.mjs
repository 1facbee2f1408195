// Bundles each test/*.test.ts with esbuild into out-test/*.test.cjs, with
// `vscode` aliased to test/stub/vscode.ts (the editor API in memory) and
// everything else as the host bundle has it, so the tests run the
// extension's own code under `node --test out-test/`.
import * as esbuild from "esbuild";
import { readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { hostOptions } from "../esbuild.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(here);
const outdir = path.join(root, "out-test");

rmSync(outdir, { recursive: true, force: true });
await esbuild.build({
  ...hostOptions,
  entryPoints: readdirSync(here)
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => path.join(here, f)),
  outdir,
  outExtension: { ".js": ".cjs" },
  external: [],
  alias: { vscode: path.join(here, "stub", "vscode.ts") },
  sourcemap: "inline",
});
