// Benchmark of the chat webview: the minified bundle's size, and a turn of
// 2,000 updates (message and thought chunks, tool calls with growing
// terminal output, edits, plans, usage) fed to the real bundle in headless
// Chromium in bursts, as darman's notifications arrive. Reports the time the
// webview spends per update batch (its own performance.measure entries,
// taken with performance.now()), the frame intervals while the turn plays,
// the time to load the same turn as history, what saving the state costs,
// and the batches of a turn that streams one 1,000-line code block.
//
//   node vscode-extension/webview/bench/render.mjs [--runs N] [--json]
import { gzipSync } from "node:zlib";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { launch, open, serve, skip } from "../test/harness.mjs";

const args = process.argv.slice(2);
const runs = Number(args[args.indexOf("--runs") + 1]) || (args.includes("--runs") ? 1 : 3);
const asJSON = args.includes("--json");

// A deterministic random source, so every run plays the same turn.
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const words = "the a parser token returns error when input is empty so we check length first and then scan each rune of the file to find where the lexer stops".split(" ");

// turn builds the updates of one busy turn, n in all.
export function turn(n = 2000, seed = 1) {
  const rand = rng(seed);
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const u = [];
  const push = (x) => u.length < n && u.push(x);
  const chunk = (kind, text) => push({ sessionUpdate: kind, content: { type: "text", text } });
  const phrase = (k) => Array.from({ length: k }, () => pick(words)).join(" ");
  push({ sessionUpdate: "state_update", state: "running" });
  chunk("user_message_chunk", "Find why the parser fails on empty files, fix it and run the tests.");
  let call = 0;
  const plan = ["read the parser", "find the failing case", "fix it", "run the tests", "summarise"];
  let step = 0;
  while (u.length < n - 2) {
    // Think a little.
    for (let i = 0, k = 5 + Math.floor(rand() * 20); i < k; i++) chunk("agent_thought_chunk", `${phrase(3)} `);
    // Update the plan.
    push({
      sessionUpdate: "plan",
      entries: plan.map((content, i) => ({ content, status: i < step ? "completed" : i === step ? "in_progress" : "pending" })),
    });
    step = Math.min(step + 1, plan.length);
    // Say something with markdown: paragraphs, a list, a code block.
    const parts = [
      `${phrase(12)}.\n\n`,
      `- ${phrase(5)}\n- \`${pick(words)}\` ${phrase(4)}\n\n`,
      "```go\nfunc parse(src []byte) (*File, error) {\n\tif len(src) == 0 {\n\t\treturn nil, errEmpty\n\t}\n\treturn scan(src)\n}\n```\n\n",
      `${phrase(20)}.\n\n`,
    ];
    for (const part of parts) {
      for (let i = 0; i < part.length; ) {
        const len = 3 + Math.floor(rand() * 12);
        chunk("agent_message_chunk", part.slice(i, i + len));
        i += len;
      }
    }
    // A command with output that grows, then a read and an edit.
    const id = `call_${++call}`;
    const title = "go test ./parser/...";
    push({ sessionUpdate: "tool_call", toolCallId: id, title, kind: "execute", status: "pending", rawInput: { command: title } });
    let output = "";
    for (let i = 0; i < 15; i++) {
      output += `=== RUN   TestParse/${phrase(2).replace(/ /g, "_")}\n--- PASS (0.00s)\n`;
      push({ sessionUpdate: "tool_call_update", toolCallId: id, title, kind: "execute", status: "in_progress", content: [{ type: "terminal", output }] });
    }
    push({ sessionUpdate: "tool_call_update", toolCallId: id, title, kind: "execute", status: "completed", content: [{ type: "terminal", output: output + "ok  parser 0.012s\n" }] });
    const loc = [{ uri: "file:///work/parser/parse.go", range: { start: { line: 40, character: 0 }, end: { line: 80, character: 0 } } }];
    const rid = `call_${++call}`;
    push({ sessionUpdate: "tool_call", toolCallId: rid, title: "read parser/parse.go", kind: "read", status: "in_progress", locations: loc });
    push({ sessionUpdate: "tool_call_update", toolCallId: rid, title: "read parser/parse.go", kind: "read", status: "completed", locations: loc, content: [{ type: "content", content: { type: "text", text: "package parser\n".repeat(40) } }] });
    const eid = `call_${++call}`;
    const oldText = Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join("");
    const newText = oldText.replace("line 50\n", "line 50 changed\nline 50b\n");
    push({ sessionUpdate: "tool_call", toolCallId: eid, title: "edit parser/parse.go", kind: "edit", status: "in_progress", locations: loc });
    push({ sessionUpdate: "tool_call_update", toolCallId: eid, title: "edit parser/parse.go", kind: "edit", status: "completed", locations: loc, content: [{ type: "diff", uri: loc[0].uri, oldText, newText }] });
    push({ sessionUpdate: "usage_update", inputTokens: 12000, outputTokens: 400, cacheReadTokens: 9000, cost: 0.012, contextUsed: 21000, contextWindow: 200000 });
  }
  u.length = Math.min(u.length, n - 1);
  u.push({ sessionUpdate: "state_update", state: "idle" });
  return u;
}

// codeTurn is a turn that writes one long file in a code block (1,000
// lines in 2,000 chunks): the worst case for re-rendering a growing tail.
export function codeTurn(n = 2000) {
  const lines = Array.from({ length: 1000 }, (_, i) => `\tx${i} := compute(${i}, "value") // line ${i}\n`).join("");
  const text = "Here is the whole file:\n```go\n" + lines + "```\nThat is all.\n";
  const size = Math.ceil(text.length / (n - 2));
  const u = [{ sessionUpdate: "state_update", state: "running" }];
  for (let i = 0; i < text.length; i += size) u.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: text.slice(i, i + size) } });
  u.push({ sessionUpdate: "state_update", state: "idle" });
  return u;
}

// bursts groups updates as they reach the webview: a few at a time, then a
// pause, now and then a pile (the client read slower than darman wrote).
function bursts(updates, seed = 2) {
  const rand = rng(seed);
  const out = [];
  for (let i = 0; i < updates.length; ) {
    const size = rand() < 0.1 ? 20 + Math.floor(rand() * 60) : 1 + Math.floor(rand() * 8);
    out.push({ delay: Math.floor(2 + rand() * 14), updates: updates.slice(i, i + size) });
    i += size;
  }
  return out;
}

function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

function stats(xs) {
  const s = xs.slice().sort((a, b) => a - b);
  return { n: s.length, p50: quantile(s, 0.5), p95: quantile(s, 0.95), max: s[s.length - 1], sum: s.reduce((a, b) => a + b, 0) };
}

async function playTurn(w, plan) {
  return w.page.evaluate(async (plan) => {
    performance.clearMeasures("darman:batch");
    performance.clearMeasures("darman:save");
    const frames = [];
    let last = performance.now();
    let running = true;
    const tick = (t) => {
      frames.push(t - last);
      last = t;
      if (running) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    const start = performance.now();
    for (const b of plan) {
      await new Promise((r) => setTimeout(r, b.delay));
      for (const update of b.updates) window.postMessage({ type: "update", sessionId: "bench", update }, "*");
    }
    // Wait until the last update is shown.
    await new Promise((r) => {
      const check = () => (document.querySelector(".prompt .send:not([hidden])") ? r() : setTimeout(check, 5));
      check();
    });
    running = false;
    const wall = performance.now() - start;
    // Let the last throttled save happen (at most a second after the turn).
    await new Promise((r) => setTimeout(r, 1200));
    const batches = performance.getEntriesByName("darman:batch").map((e) => ({ ms: e.duration, messages: e.detail }));
    const saves = performance.getEntriesByName("darman:save").map((e) => e.duration);
    const stateBytes = (localStorage.getItem("vscode-state") ?? "").length;
    return { wall, frames: frames.slice(1), batches, saves, stateBytes, entries: document.querySelectorAll(".stream .entry").length };
  }, plan);
}

async function loadHistory(w, updates) {
  return w.page.evaluate(async (updates) => {
    performance.clearMeasures("darman:batch");
    window.postMessage({ type: "session", sessionId: "hist", title: "", model: "", state: "idle", updates }, "*");
    await new Promise((r) => {
      const check = () => (performance.getEntriesByName("darman:batch").length ? r() : setTimeout(check, 5));
      check();
    });
    return performance.getEntriesByName("darman:batch")[0].duration;
  }, updates);
}

async function main() {
  const server = await serve({ minify: true });
  try {
    const js = await readFile(path.join(server.dir, "webview.js"));
    const css = await readFile(path.join(server.dir, "webview.css"));
    const size = {
      js: js.length,
      css: css.length,
      total: js.length + css.length,
      jsGzip: gzipSync(js).length,
      cssGzip: gzipSync(css).length,
    };
    const report = { size, goalBytes: 200 * 1024, runs: [] };
    if (skip) {
      report.skipped = skip;
    } else {
      const updates = turn(2000);
      const plan = bursts(updates);
      const code = codeTurn(2000);
      const browser = await launch();
      try {
        for (let r = 0; r < runs; r++) {
          const w = await open(browser, server.origin);
          await w.send({ type: "session", sessionId: "bench", title: "bench", model: "", state: "idle", updates: [] });
          await w.settle();
          const played = await playTurn(w, plan);
          const history = await loadHistory(w, updates);
          await w.send({ type: "session", sessionId: "bench", title: "bench", model: "", state: "idle", updates: [] });
          await w.settle();
          const codePlayed = await playTurn(w, bursts(code, 3));
          const codeBatch = stats(codePlayed.batches.map((b) => b.ms));
          const batch = stats(played.batches.map((b) => b.ms));
          const frame = stats(played.frames);
          const save = stats(played.saves);
          report.runs.push({
            updates: updates.length,
            bursts: plan.length,
            batches: batch.n,
            batchMs: { p50: batch.p50, p95: batch.p95, max: batch.max, total: batch.sum },
            updatesPerBatch: updates.length / batch.n,
            frameMs: { p50: frame.p50, p95: frame.p95, max: frame.max },
            framesOver50ms: played.frames.filter((f) => f > 50).length,
            wallMs: played.wall,
            entries: played.entries,
            historyLoadMs: history,
            saves: save.n,
            saveMs: { p50: save.p50, p95: save.p95, max: save.max },
            stateBytes: played.stateBytes,
            codeBlock: { updates: code.length, batches: codeBatch.n, batchMs: { p50: codeBatch.p50, p95: codeBatch.p95, max: codeBatch.max } },
          });
          await w.close();
        }
      } finally {
        await browser.close();
      }
    }
    if (report.runs.length) {
      const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
      report.summary = {
        batchP95MedianMs: median(report.runs.map((r) => r.batchMs.p95)),
        batchP95BestMs: Math.min(...report.runs.map((r) => r.batchMs.p95)),
        codeBlockP95MedianMs: median(report.runs.map((r) => r.codeBlock.batchMs.p95)),
        historyLoadMedianMs: median(report.runs.map((r) => r.historyLoadMs)),
        loadAverage: (await import("node:os")).loadavg()[0],
      };
    }
    if (asJSON) {
      console.log(JSON.stringify(report, null, 2));
      return;
    }
    const kb = (b) => `${(b / 1024).toFixed(1)} KB`;
    console.log(`bundle: webview.js ${kb(size.js)} (gzip ${kb(size.jsGzip)}), webview.css ${kb(size.css)} (gzip ${kb(size.cssGzip)}), total ${kb(size.total)} (goal ≤ 200 KB)`);
    if (report.skipped) {
      console.log(`render: skipped: ${report.skipped}`);
      return;
    }
    const f = (x) => x.toFixed(2);
    const sm = report.summary;
    console.log(
      `summary over ${report.runs.length} runs: batch p95 median ${f(sm.batchP95MedianMs)} ms (best ${f(sm.batchP95BestMs)}, goal ≤ 16); ` +
        `code block batch p95 median ${f(sm.codeBlockP95MedianMs)} ms; history load median ${f(sm.historyLoadMedianMs)} ms; load average ${sm.loadAverage.toFixed(1)}`,
    );
    for (const [i, r] of report.runs.entries()) {
      console.log(
        `run ${i + 1}: ${r.updates} updates in ${r.bursts} bursts → ${r.batches} batches (${r.updatesPerBatch.toFixed(1)} updates/batch); ` +
          `batch ms p50 ${f(r.batchMs.p50)} p95 ${f(r.batchMs.p95)} max ${f(r.batchMs.max)} total ${f(r.batchMs.total)}; ` +
          `frame ms p50 ${f(r.frameMs.p50)} p95 ${f(r.frameMs.p95)} max ${f(r.frameMs.max)}, ${r.framesOver50ms} frames > 50 ms; ` +
          `wall ${f(r.wallMs)} ms; ${r.entries} entries; history load of the same turn ${f(r.historyLoadMs)} ms; ` +
          `${r.saves} state saves, p50 ${f(r.saveMs.p50)} max ${f(r.saveMs.max)} ms, state ${(r.stateBytes / 1024).toFixed(0)} KB; ` +
          `1,000-line code block in ${r.codeBlock.updates} chunks: ${r.codeBlock.batches} batches, ms p50 ${f(r.codeBlock.batchMs.p50)} p95 ${f(r.codeBlock.batchMs.p95)} max ${f(r.codeBlock.batchMs.max)}`,
      );
    }
  } finally {
    await server.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
