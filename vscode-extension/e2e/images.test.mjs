// End to end in a real VS Code (code-server, headless Chromium, the
// packaged VSIX, the real darman against the scripted model): a PNG put
// on the clipboard and pasted with Ctrl+V into the darman panel's prompt
// box is drawn as a thumbnail, goes with the prompt, and reaches the
// model's request byte for byte (the bytes the panel holds); the sent
// message shows it once, fetched from darman's store, in the live turn
// (darman's user message links to it) and again when the window is
// reloaded and the panel reopens the session.
// A model configured as text-only refuses the next pasted image with the
// reason in the panel, and the image goes back to the tray.
// DARMAN_TEST_BIN names a directory with darman and scripted-model built.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildAll, closeCodeServer, missing, openCodeServer, screenshot, startModel, until, removeTemp } from "./harness.mjs";

const skip = missing();
let tmp, cs, model, modelURL, page;

before(async () => {
  if (skip) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "darman-e2e-images-"));
  const bin = buildAll(tmp);
  ({ model, url: modelURL } = await startModel(bin, tmp, {
    steps: [{ text: "A red rectangle, twice as wide as it is tall." }],
    // What the endpoint serves (GET /v1/models): the panel's model picker.
    models: ["claude-sonnet-4-5", "claude-haiku-4-5"],
  }));
  const home = path.join(tmp, "home");
  const workspace = path.join(home, "pics");
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(
    path.join(workspace, "darman.json"),
    JSON.stringify({
      model: "anthropic/claude-sonnet-4-5",
      provider: {
        anthropic: {
          baseURL: modelURL,
          apiKey: "sk-ant-test-0123456789",
          // A model that does not take images, for the refusal.
          models: { "claude-haiku-4-5": { images: false } },
        },
      },
      retry: { maxAttempts: 1 },
    }),
  );
  cs = await openCodeServer({ tmp, home, workspace, bin });
  page = cs.page;
});

after(async () => {
  await closeCodeServer(cs, "code-server-images.log");
  model?.stdin.end();
  await removeTemp(tmp);
});

/** The chat webview's document (inside two iframes). */
const chat = () => page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");

/** The webview's frame, to run code in it. */
async function chatFrame() {
  return until(async () => {
    for (const f of page.frames()) {
      if (await f.$(".prompt-input").catch(() => null)) return f;
    }
    return null;
  }, "the darman panel's frame");
}

/**
 * Shows the panel: a click on darman's activity bar item, unless the view
 * is open already (a reloaded window restores it; a click would close it).
 */
async function openPanel() {
  const box = chat().getByLabel("Message darman");
  const item = page.locator(".activitybar .action-item", { has: page.locator('[aria-label^="darman"]') }).first();
  await item.waitFor({ timeout: 60_000 });
  if (!(await item.evaluate((el) => el.classList.contains("checked")))) {
    await item.click();
  }
  await box.waitFor({ timeout: 60_000 });
  return box;
}

/** Draws a w×h PNG with the page's canvas and returns its base64. */
const drawPNG = (frame, w, h) =>
  frame.evaluate(
    ({ w, h }) => {
      const c = document.createElement("canvas");
      c.width = w;
      c.height = h;
      const g = c.getContext("2d");
      g.fillStyle = "#d22";
      g.fillRect(0, 0, w, h);
      return c.toDataURL("image/png").split(",")[1];
    },
    { w, h },
  );

/**
 * Pastes a PNG into the prompt box as a user does: the image goes on the
 * system clipboard (the browser's async clipboard API, permission
 * granted), then Ctrl+V in the prompt box, which code-server leaves to
 * the browser's own paste.
 */
async function pastePNG(b64) {
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.bringToFront();
  const wrote = await page.evaluate(async (b64) => {
    const blob = new Blob([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], { type: "image/png" });
    try {
      await navigator.clipboard.write([new ClipboardItem({ "image/png": blob })]);
      return "";
    } catch (err) {
      return String(err);
    }
  }, b64);
  assert.equal(wrote, "", "the PNG is on the clipboard");
  await chat().getByLabel("Message darman").click();
  await page.keyboard.press("Control+V");
}

/** The natural widths of the decoded images under selector, once there are n. */
async function drawn(frame, selector, n) {
  await frame.waitForFunction(
    ({ selector, n }) => {
      const imgs = [...document.querySelectorAll(selector)];
      return imgs.length === n && imgs.every((i) => i.complete && i.naturalWidth > 0);
    },
    { selector, n },
    { timeout: 60_000 },
  );
  return frame.evaluate((selector) => [...document.querySelectorAll(selector)].map((i) => i.naturalWidth), selector);
}

// The prompts the model got (the panel also lists the endpoint's models: GET /v1/models).
const modelCalls = async () => ((await (await fetch(`${modelURL}/llmtest/calls`)).json()) ?? []).filter((c) => c.api !== "models");

test("in code-server: a pasted PNG is drawn, reaches the model, shows in the turn and in the reopened session; a text-only model refuses it in the panel", { skip }, async () => {
  try {
    await scenario();
  } catch (err) {
    await screenshot(page, "images-failure").catch(() => {});
    throw err;
  }
});

async function scenario() {
  await page.locator(".statusbar-item", { hasText: "anthropic/claude-sonnet-4-5" }).first().waitFor({ timeout: 60_000 });
  const box = await openPanel();
  let frame = await chatFrame();
  const pic = await drawPNG(frame, 64, 32);

  await pastePNG(pic);
  assert.deepEqual(await drawn(frame, ".image-thumb img", 1), [64], "the tray's thumbnail is drawn");
  // What the panel holds: the clipboard's PNG (Chromium re-encodes an
  // image put on the clipboard, so these are not the drawn bytes).
  const held = (await frame.locator(".image-thumb img").getAttribute("src")).replace(/^data:image\/png;base64,/, "");
  await box.fill("What is in this picture?");
  await box.press("Enter");

  // The scripted model's request carried the image, byte for byte.
  const calls = await until(async () => {
    const cs = await modelCalls();
    return cs.length > 0 && cs;
  }, "the model's call");
  assert.equal(calls.length, 1);
  assert.deepEqual(
    (calls[0].images ?? []).map((i) => [i.mediaType, i.width, i.height, i.data === held]),
    [["image/png", 64, 32, true]],
    "the model received the pasted PNG",
  );
  await chat().getByText("A red rectangle, twice as wide as it is tall.").waitFor({ timeout: 60_000 });
  // The live turn's message shows the image once, not only a label: the
  // one darman's user message links to, its bytes from darman's store.
  assert.deepEqual(await drawn(frame, ".entry.user .message-image img", 1), [64], "the sent message's image is drawn, once");
  const liveSrc = await frame.locator(".entry.user .message-image img").getAttribute("src");
  assert.ok(liveSrc.startsWith("data:image/png;base64,") && liveSrc.endsWith(held), "the live image's bytes came from darman's store");
  assert.equal(await frame.locator(".image-thumb").count(), 0, "the tray is empty once sent");
  await screenshot(page, "images");

  // Reload the window: the panel reopens the session from darman, and its
  // image comes from darman's store (darman.session.image through the host).
  await page.reload();
  await page.locator(".monaco-workbench").waitFor({ timeout: 120_000 });
  await page.locator(".statusbar-item", { hasText: "anthropic/claude-sonnet-4-5" }).first().waitFor({ timeout: 60_000 });
  await openPanel();
  await chat().getByText("A red rectangle, twice as wide as it is tall.").waitFor({ timeout: 60_000 });
  frame = await chatFrame();
  assert.deepEqual(await drawn(frame, ".entry.user .message-image img", 1), [64], "the reopened session's image is drawn");
  const src = await frame.locator(".entry.user .message-image img").getAttribute("src");
  assert.ok(src.startsWith("data:image/png;base64,") && src.endsWith(held), "the image's bytes came from darman's store");
  // Click: full size.
  await chat().getByRole("button", { name: /^Open .* full size$/ }).click();
  assert.deepEqual(await drawn(frame, ".image-viewer img", 1), [64]);
  await page.keyboard.press("Escape");
  await chat().getByRole("dialog").waitFor({ state: "detached" });

  // A model that does not take images: the refusal is shown, the model is
  // not called, and the image is back in the tray to send elsewhere.
  await chat().getByLabel("Model").selectOption("anthropic/claude-haiku-4-5");
  await pastePNG(pic);
  await drawn(frame, ".image-thumb img", 1);
  const input = chat().getByLabel("Message darman");
  await input.fill("And this one?");
  await input.press("Enter");
  await chat().getByRole("alert").getByText("takes text only; choose a model that takes images").waitFor({ timeout: 60_000 });
  assert.deepEqual(await drawn(frame, ".image-thumb img", 1), [64], "the refused image is back in the tray");
  assert.equal((await modelCalls()).length, 1, "the text-only model was not called");
  await screenshot(page, "images-refused");
}
