// A long session's history: darman.session.load answers with its last
// page, and the panel says that earlier messages are not shown.

import { test } from "node:test";
import assert from "node:assert/strict";
import { MemoryMemento } from "./stub/vscode";
import { ChatController } from "../src/chat";
import { DiffContent } from "../src/diff";
import type { HostMessage } from "../shared/protocol";

async function load(answer: object): Promise<HostMessage[]> {
  const posted: HostMessage[] = [];
  const chat = new ChatController({
    server: {
      executeCommand: async (command) => {
        if (command === "darman.session.list") return { sessions: [] };
        if (command === "darman.session.load") return answer;
        throw new Error(`unknown command ${command}`);
      },
    },
    memento: new MemoryMemento() as never,
    diffs: new DiffContent(),
    configuredModel: () => "",
    reveal: () => {},
    onState: () => {},
  });
  chat.attach({ post: (m) => posted.push(m) });
  await chat.handle({ type: "webviewReady" });
  await chat.handle({ type: "loadSession", sessionId: "ses_1" });
  return posted;
}

const hi = { sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi" } };

test("a page of a longer history is shown after a notice that says so", async () => {
  const posted = await load({ sessionId: "ses_1", title: "t", model: "m", state: "idle", updates: [hi], more: true, firstMessageId: "msg_1" });
  const session = posted.find((m) => m.type === "session");
  assert.ok(session && session.type === "session");
  assert.equal(session.updates.length, 2);
  const notice = session.updates[0];
  assert.ok(notice.sessionUpdate === "notice" && notice.message.includes("darman sessions export ses_1"));
  assert.deepEqual(session.updates[1], hi);
});

test("a whole history is shown as it came", async () => {
  const posted = await load({ sessionId: "ses_1", title: "t", model: "m", state: "idle", updates: [hi], more: false });
  const session = posted.find((m) => m.type === "session");
  assert.ok(session && session.type === "session");
  assert.deepEqual(session.updates, [hi]);
});

test("a loaded history's turns reach the webview, their starts moved past the notice", async () => {
  const turns = [{ turnId: "msg_1", start: 0 }];
  const whole = (await load({ sessionId: "ses_1", title: "t", model: "m", state: "idle", updates: [hi], turns, more: false })).find((m) => m.type === "session");
  assert.ok(whole && whole.type === "session");
  assert.deepEqual(whole.turns, turns);
  const page = (await load({ sessionId: "ses_1", title: "t", model: "m", state: "idle", updates: [hi], turns, more: true, firstMessageId: "msg_1" })).find(
    (m) => m.type === "session",
  );
  assert.ok(page && page.type === "session");
  assert.deepEqual(page.turns, [{ turnId: "msg_1", start: 1 }]);
  assert.deepEqual(page.updates[1], hi);
});
