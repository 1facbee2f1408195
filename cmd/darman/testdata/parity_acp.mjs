// The ACP leg of cmd/darman's TestFrontsAgree: a client built on the
// official ACP TypeScript SDK (@agentclientprotocol/sdk) driving the real
// `darman acp` through the parity scenario. It reads files for darman as
// an editor does (fs/read_text_file), serving notes.txt as the editor's
// unsaved buffer from the /look command on, and allows every permission
// asked once.
//
// Run by TestFrontsAgree with ACP_SDK (the SDK's entry file), DARMAN_BIN,
// WORKSPACE and the scenario's prompts (TIDY, CANCEL, KILLED, RESUME,
// BUFFER) set, twice:
//
//   - without SESSION_ID: initialize, session/new, the tidy prompt, /look,
//     a prompt cancelled once its answer streams, then a prompt during
//     whose answer it prints {"kind":"streaming","pid":…} and waits for
//     the test to kill darman (kill -9);
//   - with SESSION_ID: a new darman acp, initialize, session/load of that
//     session, then the resume prompt.
//
// It prints one JSON line per thing the client saw, each with the step it
// belongs to: {"kind":"session","sessionId"}, {"kind":"update","step",
// "update"} for every session/update, {"kind":"permission","step",
// "diffs"} for every permission request and {"kind":"result","step",
// "stopReason"} for every prompt's answer. An error exits 1 with it on
// stderr.

import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const acp = await import(pathToFileURL(process.env.ACP_SDK).href);
const env = process.env;
const workspace = env.WORKSPACE;

const print = (line) => process.stdout.write(JSON.stringify(line) + "\n");

const darman = spawn(env.DARMAN_BIN, ["acp"], { cwd: workspace, stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => darman.on("exit", (code, signal) => resolve({ code, signal })));

// The session/update notifications darman wrote, counted on the wire, so
// a step can wait for the SDK to have handed all of its own to the
// handler (it hands them over after it resolved the answer that followed
// them on the wire) before the next step begins.
let wired = 0;
let partial = "";
darman.stdout.on("data", (chunk) => {
  const lines = (partial + chunk.toString("utf8")).split("\n");
  partial = lines.pop();
  for (const line of lines) {
    if (line.includes('"method":"session/update"')) wired++;
  }
});

let step = "";
let handled = 0;
let buffer = false;
const chunks = {};

const app = acp
  .client({ name: "darman-parity-test" })
  .onRequest("session/request_permission", ({ params }) => {
    print({ kind: "permission", step, diffs: (params.toolCall.content || []).filter((c) => c.type === "diff").length });
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  })
  .onRequest("fs/read_text_file", async ({ params }) => {
    if (buffer && basename(params.path) === "notes.txt") return { content: env.BUFFER };
    return { content: await readFile(params.path, "utf8") };
  })
  .onNotification("session/update", ({ params }) => {
    handled++;
    if (params.update.sessionUpdate === "agent_message_chunk") chunks[step] = (chunks[step] || 0) + 1;
    print({ kind: "update", step, update: params.update });
  });

async function until(what, ok) {
  const deadline = Date.now() + 60000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 5));
  }
}

// drained waits for the handler to have had every update on the wire.
const drained = () => until("the updates of " + step, () => handled >= wired);

const stream = acp.ndJsonStream(Writable.toWeb(darman.stdin), Readable.toWeb(darman.stdout));

// Set once the client waits for the test to kill darman: the connection
// closing then is what it waits for, not an error.
let killing = false;

const run = app.connectWith(stream, async (ctx) => {
  await ctx.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true } },
    clientInfo: { name: "darman-parity-test", version: "1.0.0" },
  });
  const prompt = (sessionId, text) => ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
  const turn = async (name, sessionId, text) => {
    step = name;
    const res = await prompt(sessionId, text);
    await drained();
    print({ kind: "result", step, stopReason: res.stopReason });
  };

  if (env.SESSION_ID) {
    step = "load";
    await ctx.request("session/load", { sessionId: env.SESSION_ID, cwd: workspace, mcpServers: [] });
    await drained();
    await turn("resume", env.SESSION_ID, env.RESUME);
    return;
  }

  const { sessionId } = await ctx.request("session/new", { cwd: workspace, mcpServers: [] });
  print({ kind: "session", sessionId });
  await turn("tidy", sessionId, env.TIDY);
  // The editor holds notes.txt with unsaved changes.
  buffer = true;
  await turn("look", sessionId, "/look");

  step = "cancel";
  const cancelled = prompt(sessionId, env.CANCEL);
  await until("the answer streaming", () => chunks.cancel > 0);
  await ctx.notify("session/cancel", { sessionId });
  const res = await cancelled;
  await drained();
  print({ kind: "result", step, stopReason: res.stopReason });

  step = "killed";
  prompt(sessionId, env.KILLED).catch(() => {});
  await until("the answer streaming", () => chunks.killed > 0);
  killing = true;
  print({ kind: "streaming", pid: darman.pid });
  await exited;
});
try {
  await run;
} catch (err) {
  if (!killing) throw err;
}
if (killing) {
  const end = await exited;
  print({ kind: "exited", signal: end.signal });
  process.exit(0);
}

darman.stdin.end();
const end = await exited;
if (end.code !== 0) {
  console.error("darman acp exited with", end);
  process.exit(1);
}
