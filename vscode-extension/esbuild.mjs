// Builds what the extension ships into dist/: the extension host bundles
// (dist/extension.js, and dist/lsp.js with vscode-languageclient, which
// extension.js loads after activation; CommonJS for Node, `vscode` left to
// the editor) and the
// chat webview (dist/webview.js and dist/webview.css, built by
// webview/build.mjs). `--minify` for the VSIX, `--watch` while developing.
import * as esbuild from "esbuild";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const outdir = path.join(here, "dist");
const minify = process.argv.includes("--minify");
const watch = process.argv.includes("--watch");

/** The host bundle's options; test/build.mjs reuses them with a stubbed vscode. */
export const hostOptions = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  // dist/lsp.js is the language client, bundled apart (see src/lsp.ts).
  external: ["vscode", "./lsp.js"],
  logLevel: "warning",
  legalComments: "none",
};

export async function build({ minify = false } = {}) {
  const host = {
    ...hostOptions,
    entryPoints: [path.join(here, "src", "extension.ts")],
    outfile: path.join(outdir, "extension.js"),
    minify,
    sourcemap: minify ? false : "linked",
    metafile: true,
    // The first statement of the bundle: activation time is measured from
    // here, so it includes loading vscode-languageclient, not just activate().
    banner: { js: "globalThis.__darmanLoadStart = performance.now();" },
    footer: { js: "globalThis.__darmanLoadEnd = performance.now();" },
  };
  const lsp = {
    ...hostOptions,
    entryPoints: [path.join(here, "src", "lsp.ts")],
    outfile: path.join(outdir, "lsp.js"),
    minify,
    sourcemap: minify ? false : "linked",
  };
  const webviewBuild = path.join(here, "webview", "build.mjs");
  const jobs = [esbuild.build(host), esbuild.build(lsp)];
  if (existsSync(webviewBuild) && existsSync(path.join(here, "webview", "src", "main.ts"))) {
    const { buildWebview } = await import(pathToFileURL(webviewBuild).href);
    jobs.push(buildWebview({ minify, outdir }));
  } else {
    console.warn("esbuild: the webview (webview/build.mjs, webview/src/main.ts) is not there yet; dist/ has no webview bundle, so the chat panel will be empty");
  }
  await Promise.all(jobs);
  return host;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (watch) {
    const ctx = await esbuild.context({
      ...hostOptions,
      entryPoints: [path.join(here, "src", "extension.ts")],
      outfile: path.join(outdir, "extension.js"),
      sourcemap: "linked",
    });
    await ctx.watch();
    console.log("esbuild: watching src/ (the webview is built once; rerun for its changes)");
    await build({ minify: false });
  } else {
    await build({ minify });
  }
}
