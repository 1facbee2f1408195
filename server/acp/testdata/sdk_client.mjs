// An ACP client built on the official TypeScript SDK
// (@agentclientprotocol/sdk), driving the real `darman acp` through the
// scenario of cmd/darman's TestACPScenario: a turn that asks a permission
// (answered), writes through fs/write_text_file and runs bash in the
// client's terminal; a turn cancelled mid-answer; the session loaded again
// with its history replayed; the sessions listed.
//
// Run by TestACPWithTheOfficialSDK with ACP_SDK (the SDK's entry file),
// DARMAN_BIN and WORKSPACE set. It prints what it saw as one JSON line and
// exits 1 with the failures on stderr.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const acp = await import(pathToFileURL(process.env.ACP_SDK).href);
// The SDK's own zod schemas of protocol version 1, to check every message
// darman sends on the wire (a handler only sees what the SDK accepted).
const z = await import(pathToFileURL(join(dirname(process.env.ACP_SDK), "..", "schema", "zod.gen.js")).href);
const workspace = process.env.WORKSPACE;

const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
};

const darman = spawn(process.env.DARMAN_BIN, ["acp"], {
  cwd: workspace,
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => darman.on("exit", (code) => resolve(code)));

// Every line darman writes, checked against the schema of its method.
const schemaOf = {
  "session/update": z.zSessionNotification,
  "session/request_permission": z.zRequestPermissionRequest,
  "fs/read_text_file": z.zReadTextFileRequest,
  "fs/write_text_file": z.zWriteTextFileRequest,
  "terminal/create": z.zCreateTerminalRequest,
  "terminal/output": z.zTerminalOutputRequest,
  "terminal/wait_for_exit": z.zWaitForTerminalExitRequest,
  "terminal/kill": z.zKillTerminalRequest,
  "terminal/release": z.zReleaseTerminalRequest,
};
const wire = { checked: 0 };
let partial = "";
darman.stdout.on("data", (chunk) => {
  const lines = (partial + chunk.toString("utf8")).split("\n");
  partial = lines.pop();
  for (const line of lines) {
    if (line.trim() === "") continue;
    const m = JSON.parse(line);
    check(m.jsonrpc === "2.0", "a message without jsonrpc 2.0: " + line);
    if (!m.method) continue;
    const schema = schemaOf[m.method];
    if (!schema) {
      failures.push("darman sent a method the client does not know: " + m.method);
      continue;
    }
    const r = schema.safeParse(m.params);
    if (!r.success) failures.push(m.method + " does not match the schema: " + JSON.stringify(r.error.issues) + " in " + line);
    wire.checked++;
  }
});

const seen = { permissions: 0, writes: {}, terminals: [], updates: [] };

const app = acp
  .client({ name: "darman-sdk-test" })
  .onRequest("session/request_permission", ({ params }) => {
    seen.permissions++;
    check(params.options.some((o) => o.kind === "allow_once"), "the permission options lack allow_once");
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  })
  .onRequest("fs/read_text_file", async ({ params }) => ({ content: await readFile(params.path, "utf8") }))
  .onRequest("fs/write_text_file", ({ params }) => {
    seen.writes[params.path] = params.content;
    return {};
  })
  .onRequest("terminal/create", ({ params }) => {
    seen.terminals.push(params);
    return { terminalId: "sdk-term-" + seen.terminals.length };
  })
  .onRequest("terminal/wait_for_exit", () => ({ exitCode: 0 }))
  .onRequest("terminal/output", () => ({ output: "in-the-terminal\n", truncated: false, exitStatus: { exitCode: 0 } }))
  .onRequest("terminal/kill", () => ({}))
  .onRequest("terminal/release", () => ({}))
  .onNotification("session/update", ({ params }) => {
    seen.updates.push(params);
  });

const stream = acp.ndJsonStream(Writable.toWeb(darman.stdin), Readable.toWeb(darman.stdout));

const updatesOf = (sessionId, kind) =>
  seen.updates.filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === kind).map((n) => n.update);

async function until(what, ok) {
  const deadline = Date.now() + 20000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// valid checks an answer of darman's against the schema of its method.
const valid = (schema, answer, what) => {
  const r = schema.safeParse(answer);
  check(r.success, what + " does not match the schema: " + JSON.stringify(r.error && r.error.issues));
};

const result = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
    clientInfo: { name: "darman-sdk-test", version: "1.0.0" },
  });
  valid(z.zInitializeResponse, init, "initialize");
  check(init.protocolVersion === 1, "protocolVersion " + init.protocolVersion);
  check(init.agentCapabilities.loadSession === true, "loadSession is not offered");

  // A turn with a permission, a write through the client and the terminal.
  const first = await ctx.request("session/new", { cwd: workspace, mcpServers: [] });
  valid(z.zNewSessionResponse, first, "session/new");
  check(first.modes && first.modes.currentModeId === "default", "modes: " + JSON.stringify(first.modes));
  const turn = await ctx.request("session/prompt", {
    sessionId: first.sessionId,
    prompt: [{ type: "text", text: "write and test" }],
  });
  valid(z.zPromptResponse, turn, "session/prompt");
  check(turn.stopReason === "end_turn", "stopReason " + turn.stopReason);
  const out = join(workspace, "out.txt");
  check(seen.writes[out] === "from darman\n", "fs/write_text_file: " + JSON.stringify(seen.writes));
  check(!existsSync(out), "darman wrote out.txt to the disk itself");
  check(seen.permissions === 1, "permission requests: " + seen.permissions);
  // bash -c, or (darman's sandbox on) darman sandbox-exec … bash -c.
  const term = seen.terminals[0] || {};
  const wrapped = (term.args || [])[0] === "sandbox-exec" && (term.args || []).slice(-3).join(" ") === "bash -c echo in-the-terminal";
  check(seen.terminals.length === 1 && (term.command === "bash" || wrapped), "terminals: " + JSON.stringify(seen.terminals));
  // The SDK hands notifications to the handler after it resolved the
  // answer that followed them on the wire (darman's order is checked by
  // the Go tests): wait for them.
  const text = () => updatesOf(first.sessionId, "agent_message_chunk").map((u) => u.content.text).join("");
  await until("the answer's text", () => text().includes("All done."));
  await until("a tool call showing the terminal", () =>
    updatesOf(first.sessionId, "tool_call_update").some((u) => (u.content || []).some((c) => c.type === "terminal")),
  );

  // Cancel mid-turn.
  const second = await ctx.request("session/new", { cwd: workspace, mcpServers: [] });
  const stalled = ctx.request("session/prompt", { sessionId: second.sessionId, prompt: [{ type: "text", text: "stall now" }] });
  await until("the stalled turn's first chunk", () => updatesOf(second.sessionId, "agent_message_chunk").length > 0);
  await ctx.notify("session/cancel", { sessionId: second.sessionId });
  const cancelled = await stalled;
  check(cancelled.stopReason === "cancelled", "cancelled turn: " + cancelled.stopReason);

  // Load the first session again: its history comes before the answer.
  const before = seen.updates.length;
  valid(z.zLoadSessionResponse, await ctx.request("session/load", { sessionId: first.sessionId, cwd: workspace, mcpServers: [] }), "session/load");
  const replay = () => seen.updates.slice(before).filter((n) => n.sessionId === first.sessionId).map((n) => n.update);
  await until("the replayed prompt", () =>
    replay().some((u) => u.sessionUpdate === "user_message_chunk" && u.content.text === "write and test"),
  );
  await until("the replayed answer", () =>
    replay().some((u) => u.sessionUpdate === "agent_message_chunk" && u.content.text.includes("All done.")),
  );
  check(replay().filter((u) => u.sessionUpdate === "tool_call").length === 2, "the load did not replay the two tool calls");

  const list = await ctx.request("session/list", { cwd: workspace });
  valid(z.zListSessionsResponse, list, "session/list");
  check(list.sessions.length === 2, "session/list: " + JSON.stringify(list));

  await ctx.request("session/set_mode", { sessionId: first.sessionId, modeId: "read_only" });
  const set = await ctx.request("session/set_config_option", { sessionId: first.sessionId, configId: "mode", value: "default" });
  valid(z.zSetSessionConfigOptionResponse, set, "session/set_config_option");
  check(set.configOptions.some((o) => o.id === "mode" && o.currentValue === "default"), "set_config_option: " + JSON.stringify(set));

  return {
    permissions: seen.permissions,
    writes: Object.keys(seen.writes).length,
    terminals: seen.terminals.length,
    updates: seen.updates.length,
    checked: wire.checked,
  };
});

darman.stdin.end();
const code = await exited;
check(code === 0, "darman acp exited with " + code);
console.log(JSON.stringify(result));
if (failures.length > 0) {
  console.error(failures.join("\n"));
  process.exit(1);
}
