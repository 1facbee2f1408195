// A pasted image from the panel through the real darman lsp: the
// webview's prompt message with images becomes darman.prompt's images, and
// the image reaches the scripted model's request.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { testing, MemoryMemento } from "./stub/vscode";
import { ChatController } from "../src/chat";
import { DiffContent } from "../src/diff";
import { buildDarman, startDarman, type Darman } from "./darman";

// A 1×1 PNG.
const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const script = { conversations: [{ match: "What is in the picture", steps: [{ text: "One pixel." }] }] };

let darman: Darman | undefined;
let skip: string | false = false;
let chat: ChatController;
const sent: { command: string; argument: unknown }[] = [];

before(async () => {
  testing.reset();
  const bin = buildDarman();
  if (!bin) {
    skip = "go is not installed (make deps installs the toolchain the tests need)";
    return;
  }
  darman = await startDarman(bin, script, {});
  const c = darman.connection;
  chat = new ChatController({
    server: {
      executeCommand: (command, argument) => {
        sent.push({ command, argument });
        return c.sendRequest("workspace/executeCommand", { command, arguments: argument ? [argument] : [] });
      },
    },
    memento: new MemoryMemento() as never,
    diffs: new DiffContent(),
    configuredModel: () => "",
    reveal: () => {},
    onState: () => {},
  });
  c.onNotification("darman/sessionUpdate", (p) => chat.sessionUpdate(p));
  chat.attach({ post: () => {} });
  await chat.serverStarted(darman.initializeResult.capabilities.experimental?.darman ?? {});
});

after(async () => {
  await darman?.stop();
});

test("an image pasted in the panel reaches the model with the prompt", async (t) => {
  if (skip) return t.skip(skip);
  await chat.handle({ type: "prompt", text: "What is in the picture?", context: [], images: [{ mimeType: "image/png", data: png, name: "pixel.png" }] });
  const prompt = sent.find((s) => s.command === "darman.prompt");
  assert.deepEqual((prompt?.argument as { images?: unknown }).images, [{ type: "image", mimeType: "image/png", data: png, name: "pixel.png" }]);
  const deadline = Date.now() + 30_000;
  let images: { mediaType: string; data: string; width: number }[] = [];
  while (Date.now() < deadline) {
    const calls = (await darman!.calls()) as { images?: typeof images }[];
    images = calls.flatMap((c) => c.images ?? []);
    if (images.length) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(images.length, 1, "the model's request carried the image");
  assert.equal(images[0].mediaType, "image/png");
  assert.equal(images[0].data, png);
  assert.equal(images[0].width, 1);
});
