// The session picker against the real darman lsp: a workspace with more
// sessions than a page lists the newest page (darman.session.list with a
// limit), "Show older sessions" adds the next (its cursor), and a refresh
// after a delete keeps every session the picker had.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { MemoryMemento } from "./stub/vscode";
import { ChatController } from "../src/chat";
import { DiffContent } from "../src/diff";
import type { HostMessage } from "../shared/protocol";
import { buildDarman, startDarman, type Darman } from "./darman";

let darman: Darman | undefined;
let skip: string | false = false;
const made: string[] = [];

before(async () => {
  const bin = buildDarman();
  if (!bin) {
    skip = "go is not installed (make deps installs the toolchain the tests need)";
    return;
  }
  darman = await startDarman(bin, { steps: [] }, {});
  for (let i = 0; i < 63; i++) {
    const r = (await darman.connection.sendRequest("workspace/executeCommand", { command: "darman.session.new", arguments: [{ title: `session ${i}` }] })) as {
      sessionId: string;
    };
    made.push(r.sessionId);
  }
});

after(async () => {
  await darman?.stop();
});

test("the session picker lists a page, then the older ones, and a refresh keeps them", { skip: skip || undefined }, async (t) => {
  if (skip || !darman) return t.skip(String(skip));
  const c = darman.connection;
  const asked: unknown[] = [];
  const posted: HostMessage[] = [];
  const chat = new ChatController({
    server: {
      executeCommand: (command, argument) => {
        if (command === "darman.session.list") asked.push(argument);
        return c.sendRequest("workspace/executeCommand", { command, arguments: argument ? [argument] : [] });
      },
    },
    memento: new MemoryMemento() as never,
    diffs: new DiffContent(),
    configuredModel: () => "",
    reveal: () => {},
    onState: () => {},
  });
  chat.attach({ post: (m) => posted.push(m) });
  const lists = () => posted.filter((m): m is Extract<HostMessage, { type: "sessions" }> => m.type === "sessions");
  await chat.handle({ type: "webviewReady" });
  await chat.handle({ type: "listSessions" });
  const first = lists().at(-1)!;
  assert.equal(first.sessions.length, 50, "the first page");
  assert.equal(first.more, true);
  assert.deepEqual(
    first.sessions.map((s) => s.title),
    made.slice(-50).map((_, i) => `session ${62 - i}`),
    "newest first",
  );
  assert.deepEqual(asked.at(-1), { limit: 50 });

  await chat.handle({ type: "moreSessions" });
  const all = lists().at(-1)!;
  assert.equal(all.more, undefined, "the last page");
  assert.deepEqual(new Set(all.sessions.map((s) => s.sessionId)), new Set(made));
  assert.equal(all.sessions.length, 63);

  // A delete refreshes the list: the older sessions stay listed.
  await chat.handle({ type: "deleteSession", sessionId: made[0] });
  const after = lists().at(-1)!;
  assert.equal(after.sessions.length, 62);
  assert.ok(!after.sessions.some((s) => s.sessionId === made[0]));
  assert.deepEqual(asked.at(-1), { limit: 63 });
});
