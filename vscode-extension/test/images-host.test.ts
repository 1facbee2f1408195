// The host side of the panel's images, against the real darman lsp: the
// live turn's user message passes the prompt's image on to the webview
// as the link a load replays (once, with no copy of the panel's own); a
// loaded session's image links are answered with their bytes
// (fetchImage → darman.session.image → an image message holding what was
// sent); a link darman does not know, or one that is not darman's,
// answers why; and a model that takes text only refuses a prompt's image
// with a reason the panel shows, the model never called.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { HostMessage } from "../shared/protocol";
import { testing } from "./stub/vscode";
import type { ChatController } from "../src/chat";
import { buildDarman, openPanel, startDarman, type Darman } from "./darman";
import { until } from "./applies";

// A 2×1 PNG.
const png = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAAEUlEQVR42mP8z8DwnwEIGAEAD/EB/0iDdUgAAAAASUVORK5CYII=";

type Panel = { chat: ChatController; posted: HostMessage[]; darman: Darman };

async function panel(bin: string, script: object, models?: Record<string, object>): Promise<Panel> {
  const darman = await startDarman(bin, script, {}, models);
  return { ...(await openPanel(darman)), darman };
}

let bin: string | undefined;
before(() => {
  testing.reset();
  bin = buildDarman();
});

describe("the panel's images, host side", () => {
  let p: Panel | undefined;
  after(async () => p?.darman.stop());

  test("the live turn's image, then a loaded session's image, fetched with its bytes", async (t) => {
    if (!bin) return t.skip("go is not installed (make deps installs the toolchain the tests need)");
    p = await panel(bin, { steps: [{ text: "Two pixels." }] });
    await p.chat.handle({ type: "prompt", text: "what is it?", context: [], images: [{ mimeType: "image/png", data: png, name: "two.png" }] });
    await until(() => p!.posted.some((m) => m.type === "update" && m.update.sessionUpdate === "state_update" && m.update.state === "idle"), "the turn's end");
    const sessionId = p.chat.currentSession!;
    const live = p.posted.flatMap((m) => (m.type === "update" && m.update.sessionUpdate === "user_message_chunk" ? [m.update.content] : []));
    assert.equal(live.length, 2, `the live user message: ${JSON.stringify(live)}`);
    assert.deepEqual(live[0], { type: "text", text: "what is it?" });
    assert.ok(live[1].type === "resource_link" && live[1].uri.startsWith(`darman-image:${sessionId}/`) && live[1].name === "two.png", JSON.stringify(live[1]));

    p.posted.length = 0;
    await p.chat.handle({ type: "loadSession", sessionId });
    const loaded = p.posted.find((m) => m.type === "session");
    assert.ok(loaded && loaded.type === "session");
    const links = loaded.updates.flatMap((u) => (u.sessionUpdate === "user_message_chunk" && u.content.type === "resource_link" ? [u.content] : []));
    assert.equal(links.length, 1, `one image link in ${JSON.stringify(loaded.updates)}`);
    assert.deepEqual(links[0], live[1], "the load replays the link the live turn sent");

    p.posted.length = 0;
    await p.chat.handle({ type: "fetchImage", uri: links[0].uri });
    assert.deepEqual(p.posted, [{ type: "image", uri: links[0].uri, mimeType: "image/png", data: png }]);

    // An image the store does not have, and a link that is not darman's.
    const unknown = `darman-image:${sessionId}/${"0".repeat(64)}`;
    p.posted.length = 0;
    await p.chat.handle({ type: "fetchImage", uri: unknown });
    await p.chat.handle({ type: "fetchImage", uri: "https://example.com/x.png" });
    const [a, b] = p.posted;
    assert.ok(a.type === "image" && a.uri === unknown && !a.data && /not found/i.test(a.error ?? ""), JSON.stringify(a));
    assert.ok(b.type === "image" && !b.data && b.error === "not an image darman stored", JSON.stringify(b));
  });
});

describe("a text-only model", () => {
  let p: Panel | undefined;
  after(async () => p?.darman.stop());

  test("refuses a prompt's image with a reason the panel shows, without calling the model", async (t) => {
    if (!bin) return t.skip("go is not installed (make deps installs the toolchain the tests need)");
    p = await panel(bin, { steps: [{ text: "never" }] }, { "claude-sonnet-4-5": { images: false } });
    p.posted.length = 0;
    await p.chat.handle({ type: "prompt", text: "what is it?", context: [], images: [{ mimeType: "image/png", data: png }] });
    const err = p.posted.find((m) => m.type === "error");
    assert.ok(err && err.type === "error", `posted ${JSON.stringify(p.posted)}`);
    assert.match(err.message, /^Sending the prompt failed: .*anthropic\/claude-sonnet-4-5 takes text only; choose a model that takes images/);
    // The panel lists the endpoint's models (GET /v1/models) when it opens; no prompt reached the model.
    const prompts = ((await p.darman.calls()) ?? []).filter((c: { api?: string }) => c.api !== "models");
    assert.deepEqual(prompts, [], "the model was not called");
  });
});
