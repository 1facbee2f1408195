// Bundles the chat webview: src/main.ts → outdir/webview.js (browser, iife),
// src/highlighter.ts → outdir/highlight.js (loaded lazily, highlight.ts)
// and src/style.css → outdir/webview.css. The host's build script imports
// buildWebview; the webview tests and the benchmark call it too, so all of
// them exercise the bundle that ships.
import * as esbuild from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));

export async function buildWebview({ minify = true, outdir } = {}) {
  if (!outdir) {
    throw new Error("buildWebview: outdir is required (the directory that receives webview.js and webview.css)");
  }
  const common = {
    bundle: true,
    minify,
    sourcemap: minify ? false : "inline",
    target: ["chrome114"],
    logLevel: "silent",
    legalComments: "none",
  };
  await Promise.all([
    esbuild.build({
      ...common,
      entryPoints: [path.join(here, "src", "main.ts")],
      outfile: path.join(outdir, "webview.js"),
      platform: "browser",
      format: "iife",
    }),
    // The highlighter, loaded by the panel when a code block first needs it.
    esbuild.build({
      ...common,
      entryPoints: [path.join(here, "src", "highlighter.ts")],
      outfile: path.join(outdir, "highlight.js"),
      platform: "browser",
      format: "iife",
    }),
    esbuild.build({
      ...common,
      entryPoints: [path.join(here, "src", "style.css")],
      outfile: path.join(outdir, "webview.css"),
    }),
  ]);
  return { js: path.join(outdir, "webview.js"), css: path.join(outdir, "webview.css"), highlight: path.join(outdir, "highlight.js") };
}

// `node vscode-extension/webview/build.mjs OUTDIR` builds by hand.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2];
  if (!outdir) {
    console.error("usage: node build.mjs OUTDIR [--no-minify]");
    process.exit(2);
  }
  await buildWebview({ outdir, minify: !process.argv.includes("--no-minify") });
}
