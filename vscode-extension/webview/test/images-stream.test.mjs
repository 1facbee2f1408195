// The images of the user's messages drawn in the stream: the tray's
// thumbnails before sending, then the images of darman's user message —
// in the live turn (the panel that sent the prompt and one that only
// watches it alike, each image once) and in a loaded session — whose
// bytes the webview asks the host for (fetchImage): each a real decoded
// <img> (naturalWidth > 0) under the page's CSP, opening full size on
// click. A prompt darman refuses (a text-only model) shows the reason and
// gives the images back.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { skip, webview } from "./harness.mjs";

const S = "ses_pics";
const ready = { type: "ready", models: [{ id: "anthropic/claude-x" }], model: "anthropic/claude-x", commands: [] };
const session = { type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] };

// png draws a w×h PNG in the page (a real encoder: the canvas's) and
// returns its base64.
const png = (p, w, h) =>
  p.evaluate(
    ({ w, h }) => {
      const c = document.createElement("canvas");
      c.width = w;
      c.height = h;
      const g = c.getContext("2d");
      g.fillStyle = "#c03";
      g.fillRect(0, 0, w, h);
      return c.toDataURL("image/png").split(",")[1];
    },
    { w, h },
  );

async function paste(p, name, b64) {
  await p.evaluate(
    ({ name, b64 }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name, { type: "image/png" }));
      document.querySelector(".prompt-input").dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
    },
    { name, b64 },
  );
}

// drawn waits for the images under selector to be decoded and returns
// their natural widths.
async function drawn(p, selector, n) {
  await p.waitForFunction(
    ({ selector, n }) => {
      const imgs = [...document.querySelectorAll(selector)];
      return imgs.length === n && imgs.every((i) => i.complete && i.naturalWidth > 0);
    },
    { selector, n },
  );
  return p.evaluate((selector) => [...document.querySelectorAll(selector)].map((i) => i.naturalWidth), selector);
}

// stored is darman's link to an image it stored; link is the user
// message's update that shows it (as the live turn and a load send it).
const stored = `darman-image:${S}/${"ab".repeat(32)}`;
const link = (uri, name, w, h) => ({
  sessionUpdate: "user_message_chunk",
  content: { type: "resource_link", uri, name, mimeType: "image/png", size: 100, text: `[image ${name}, ${w}×${h}]` },
});

// fetched are the images the webview asked the host for.
const fetched = async (w) => (await w.posted()).filter((m) => m.type === "fetchImage").map((m) => m.uri);

async function sendPrompt(p, text) {
  await p.getByRole("combobox", { name: "Message darman" }).click();
  if (text) await p.keyboard.type(text);
  await p.keyboard.press("Enter");
}

describe("webview images in the stream", { skip }, () => {
  const page = webview();

  test("the tray's thumbnail, then the sent prompt's image in its live turn, drawn and opened full size", async () => {
    const w = await page();
    const p = w.page;
    await w.send(ready, session);
    const wide = await png(p, 400, 100);
    await paste(p, "wide.png", wide);
    assert.deepEqual(await drawn(p, ".image-thumb img", 1), [400]);
    // Bounded in size, whatever the image's.
    const tray = await p.locator(".image-thumb img").boundingBox();
    assert.ok(tray.width <= 64 && tray.height <= 48, `tray thumbnail ${tray.width}×${tray.height}`);

    await sendPrompt(p, "why is it red?");
    const sent = await w.waitPosted("prompt");
    assert.equal(sent.images[0].data, wide);
    await w.clearPosted();
    // darman sends the prompt as it stored it, the image as a link to the
    // stored bytes, and starts the turn.
    await w.update(
      S,
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "why is it red?" } },
      link(stored, "wide.png", 400, 100),
      { sessionUpdate: "state_update", state: "running" },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "It is painted red." } },
    );
    const user = p.locator(".entry.user");
    await user.getByText("why is it red?").waitFor();
    await p.waitForFunction(() => document.querySelectorAll(".entry.user .message-image").length === 1);
    await w.settle();
    assert.deepEqual(await fetched(w), [stored], "the stored image is asked for once");
    await w.send({ type: "image", uri: stored, mimeType: "image/png", data: wide });
    // Drawn once: the panel keeps no copy of its own beside darman's.
    assert.deepEqual(await drawn(p, ".entry.user .message-image img", 1), [400]);
    const box = await p.locator(".entry.user .message-image img").boundingBox();
    assert.ok(box.width <= 160 && box.height <= 120 && box.width > 100, `message thumbnail ${box.width}×${box.height}`);

    // The saved state refers to the image; its bytes stay out of it.
    await p.waitForFunction(() => localStorage.getItem("vscode-state")?.includes("It is painted red."));
    const saved = JSON.stringify(await w.state());
    assert.ok(saved.includes(stored) && !saved.includes(wide.slice(0, 200)), "the saved state holds the image's reference, not its bytes");

    // A click opens it full size; Escape closes it.
    await p.getByRole("button", { name: "Open wide.png full size" }).click();
    const viewer = p.getByRole("dialog", { name: "wide.png" });
    await viewer.waitFor();
    assert.deepEqual(await drawn(p, ".image-viewer img", 1), [400]);
    const full = await p.locator(".image-viewer img").boundingBox();
    assert.ok(full.width > box.width, `full size ${full.width} wider than the thumbnail ${box.width}`);
    await p.keyboard.press("Escape");
    await viewer.waitFor({ state: "detached" });
    // The next turn's message does not get the image again.
    await w.update(S, { sessionUpdate: "state_update", state: "idle" });
    await sendPrompt(p, "and now?");
    await w.update(
      S,
      { sessionUpdate: "state_update", state: "running" },
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "and now?" } },
    );
    await p.getByText("and now?", { exact: true }).waitFor();
    assert.equal(await p.locator(".entry.user").nth(1).locator("img").count(), 0);
    assert.deepEqual(await w.csp(), []);
    assert.deepEqual(w.errors, []);
  });

  test("an image sent alone shows in its message", async () => {
    const w = await page();
    const p = w.page;
    await w.send(ready, session);
    const pic = await png(p, 30, 20);
    await paste(p, "", pic);
    await drawn(p, ".image-thumb img", 1);
    await sendPrompt(p, "");
    await w.waitPosted("prompt");
    // darman stores no text for it: the message is the image alone.
    await w.update(S, link(stored, "image", 30, 20), { sessionUpdate: "state_update", state: "running" });
    await w.send({ type: "image", uri: stored, mimeType: "image/png", data: pic });
    assert.deepEqual(await drawn(p, ".entry.user .message-image img", 1), [30]);
    assert.equal(await p.locator(".image-thumb").count(), 0, "the tray stays empty: darman took the prompt");
  });

  test("a panel that only watches the turn (it sent nothing) shows its images live, as the one that sent it does", async () => {
    const w = await page();
    const p = w.page;
    await w.send(ready, session);
    const pic = await png(p, 50, 25);
    await w.update(
      S,
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "from elsewhere" } },
      link(stored, "shot.png", 50, 25),
      { sessionUpdate: "state_update", state: "running" },
    );
    await p.getByText("from elsewhere").waitFor();
    await p.waitForFunction(() => document.querySelectorAll(".entry.user .message-image").length === 1);
    await w.settle();
    assert.deepEqual(await fetched(w), [stored]);
    await w.send({ type: "image", uri: stored, mimeType: "image/png", data: pic });
    assert.deepEqual(await drawn(p, ".entry.user .message-image img", 1), [50]);
    await p.getByRole("button", { name: "Open shot.png full size" }).waitFor();
    assert.deepEqual(await w.csp(), []);
  });

  test("a loaded session's images: asked of the host once, drawn when the bytes come; one darman cannot send says why", async () => {
    const w = await page();
    const p = w.page;
    const pic = await png(p, 48, 32);
    const a = `darman-image:${S}/aaaa`;
    const gone = `darman-image:${S}/bbbb`;
    const at = (uri, name) => link(uri, name, 48, 32);
    await w.send(ready, {
      ...session,
      updates: [
        { sessionUpdate: "user_message_chunk", content: { type: "text", text: "compare" } },
        at(a, "first.png"),
        at(gone, "second.png"),
        { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Same." } },
        { sessionUpdate: "user_message_chunk", content: { type: "text", text: "the first again" } },
        at(a, "first.png"),
      ],
    });
    await p.getByText("Same.").waitFor();
    await w.settle();
    const asked = (await w.posted()).filter((m) => m.type === "fetchImage").map((m) => m.uri);
    assert.deepEqual(asked, [a, gone], "each stored image is asked for once");
    await w.send({ type: "image", uri: a, mimeType: "image/png", data: pic }, { type: "image", uri: gone, error: "not found" });
    assert.deepEqual(await drawn(p, ".message-image:not(.unavailable) img", 2), [48, 48]);
    await p.getByRole("button", { name: "second.png: not found" }).waitFor();
    // The two messages are two turns; the texts stay with their images.
    assert.deepEqual(await p.locator(".entry.user").evaluateAll((els) => els.map((e) => e.querySelectorAll("img").length)), [2, 1]);

    // Opened again (the host sends the history once more): the bytes are
    // kept, not asked for again.
    await w.clearPosted();
    await w.send({ ...session, updates: [at(a, "first.png")] });
    assert.deepEqual(await drawn(p, ".message-image img", 1), [48]);
    assert.deepEqual((await w.posted()).filter((m) => m.type === "fetchImage"), []);
    assert.deepEqual(await w.csp(), []);
  });

  test("a prompt refused for its images shows why and gives the images back to the tray", async () => {
    const w = await page();
    const p = w.page;
    await w.send(ready, session);
    await paste(p, "shot.png", await png(p, 10, 10));
    await drawn(p, ".image-thumb img", 1);
    await sendPrompt(p, "look");
    await w.waitPosted("prompt");
    await p.waitForFunction(() => document.querySelectorAll(".image-thumb").length === 0);
    const why = "Sending the prompt failed: anthropic/claude-x takes text only; choose a model that takes images, or send the prompt without them";
    await w.send({ type: "error", message: why });
    await p.getByRole("alert").getByText("takes text only; choose a model that takes images").waitFor();
    assert.deepEqual(await drawn(p, ".image-thumb img", 1), [10]);
    assert.equal(await p.locator(".entry.user").count(), 0);
  });
});
