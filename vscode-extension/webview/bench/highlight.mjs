// Benchmark of code highlighting's cost to the panel: the bundles' sizes,
// the webview's first contentful paint (the highlighter is not part of it:
// it loads when a code block first needs it), and, once an answer with
// code arrives, the time until its block is coloured (the highlighter
// fetched and started) and the time to colour one more 200-line Go block.
// Fresh pages each run, headless Chromium, medians.
//
//   node vscode-extension/webview/bench/highlight.mjs [--runs N] [--json]
import { gzipSync } from "node:zlib";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { launch, open, serve, skip } from "../test/harness.mjs";

const args = process.argv.slice(2);
const runs = Number(args[args.indexOf("--runs") + 1]) || 5;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const goBlock = (n) =>
  "```go\n" + Array.from({ length: n }, (_, i) => (i % 5 === 0 ? `func f${i}(s string) (int, error) {` : i % 5 === 4 ? "}" : `\tif len(s) > ${i} { return ${i}, nil } // line ${i}`)).join("\n") + "\n```\n";

if (skip) {
  console.log(`skipped: ${skip}`);
  process.exit(0);
}
const server = await serve();
const browser = await launch();
const sizes = {};
for (const f of ["webview.js", "webview.css", "highlight.js"]) {
  const file = path.join(server.dir, f);
  if (!(await stat(file).catch(() => null))) continue;
  const b = await readFile(file);
  sizes[f] = { bytes: b.length, gzip: gzipSync(b).length };
}
const fcp = [];
const firstBlock = [];
const nextBlock = [];
for (let i = 0; i < runs; i++) {
  const w = await open(browser, server.origin);
  fcp.push(await w.page.evaluate(() => performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? NaN));
  const hasHighlighter = sizes["highlight.js"] !== undefined;
  if (hasHighlighter) {
    const t0 = await w.page.evaluate(() => performance.now());
    await w.send({ type: "session", sessionId: "b", title: "", model: "", state: "idle", updates: [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Here:\n\n" + goBlock(20) } }] });
    await w.page.waitForFunction(() => document.querySelector("code.highlighted"));
    firstBlock.push((await w.page.evaluate(() => performance.now())) - t0);
    await w.page.evaluate(() => performance.clearMeasures("darman:highlight"));
    await w.send({ type: "update", sessionId: "b", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "\n\nAnd:\n\n" + goBlock(200) } } });
    await w.page.waitForFunction(() => document.querySelectorAll("code.highlighted").length === 2);
    nextBlock.push(await w.page.evaluate(() => performance.getEntriesByName("darman:highlight").at(-1)?.duration ?? NaN));
  }
  await w.close();
}
await browser.close();
await server.close();
const result = { runs, sizes, firstContentfulPaintMs: median(fcp), firstBlockHighlightedMs: firstBlock.length ? median(firstBlock) : null, block200LinesMs: nextBlock.length ? median(nextBlock) : null };
if (args.includes("--json")) console.log(JSON.stringify(result, null, 2));
else {
  for (const [f, s] of Object.entries(sizes)) console.log(`${f}: ${(s.bytes / 1024).toFixed(1)} KiB (${(s.gzip / 1024).toFixed(1)} KiB gzip)`);
  console.log(`first contentful paint: ${result.firstContentfulPaintMs.toFixed(1)} ms (median of ${runs})`);
  if (result.firstBlockHighlightedMs !== null) {
    console.log(`first code block coloured after it arrived: ${result.firstBlockHighlightedMs.toFixed(1)} ms`);
    console.log(`a further 200-line Go block coloured in: ${result.block200LinesMs.toFixed(1)} ms`);
  }
}
