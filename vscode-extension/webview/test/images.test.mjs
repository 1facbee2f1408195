// Images on the prompt box: a pasted image and a dropped one show as
// thumbnails, can be removed, and go with the prompt as {mimeType, data,
// name}; a file of another type is refused with the reason.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { skip, webview } from "./harness.mjs";

const S = "ses_img";
const ready = { type: "ready", models: [{ id: "anthropic/claude-x" }], model: "anthropic/claude-x", commands: [] };
// A 1×1 PNG.
const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

// put pastes (or drops) files made in the page on the prompt box.
async function put(p, how, files) {
  await p.evaluate(
    ({ how, files }) => {
      const dt = new DataTransfer();
      for (const f of files) {
        const bytes = Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0));
        dt.items.add(new File([bytes], f.name, { type: f.type }));
      }
      const box = document.querySelector(".prompt-input");
      const ev = how === "paste" ? new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true })
        : new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true });
      box.dispatchEvent(ev);
    },
    { how, files },
  );
}

describe("webview images", { skip }, () => {
  const page = webview();

  test("pasted and dropped images show as thumbnails and go with the prompt", async () => {
    const w = await page();
    const p = w.page;
    await w.send(ready, { type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] });
    await put(p, "paste", [{ name: "shot.png", type: "image/png", b64: png }]);
    await put(p, "drop", [{ name: "dropped.png", type: "image/png", b64: png }, { name: "notes.txt", type: "text/plain", b64: btoa("hi") }]);
    const thumbs = p.getByRole("list", { name: "Images sent with the prompt" }).getByRole("img");
    await p.waitForFunction(() => document.querySelectorAll(".image-thumb img").length === 2);
    assert.deepEqual(await thumbs.evaluateAll((els) => els.map((e) => e.getAttribute("alt"))), ["shot.png", "dropped.png"]);

    // Removing one leaves the other.
    await p.getByRole("button", { name: "Remove dropped.png" }).click();
    await p.waitForFunction(() => document.querySelectorAll(".image-thumb img").length === 1);

    await p.getByRole("combobox", { name: "Message darman" }).click();
    await p.keyboard.type("what is this?");
    await p.keyboard.press("Enter");
    const sent = await w.waitPosted("prompt");
    assert.equal(sent.text, "what is this?");
    assert.deepEqual(sent.images, [{ mimeType: "image/png", data: png, name: "shot.png" }]);
    // The tray empties once sent.
    await p.waitForFunction(() => document.querySelectorAll(".image-thumb").length === 0);
    assert.deepEqual(await p.evaluate(() => window.__csp), []);
  });

  test("an image alone is a prompt", async () => {
    const w = await page();
    const p = w.page;
    await w.send(ready, { type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] });
    await put(p, "paste", [{ name: "", type: "image/png", b64: png }]);
    await p.waitForFunction(() => document.querySelectorAll(".image-thumb img").length === 1);
    await p.getByRole("combobox", { name: "Message darman" }).click();
    await p.keyboard.press("Enter");
    const sent = await w.waitPosted("prompt");
    assert.equal(sent.text, "");
    assert.equal(sent.images.length, 1);
    assert.equal(sent.images[0].name, undefined);
  });

  test("an image of another type is refused with the reason", async () => {
    const w = await page();
    const p = w.page;
    await w.send(ready, { type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] });
    await put(p, "paste", [{ name: "scan.tiff", type: "image/tiff", b64: btoa("II*") }]);
    await p.getByText("darman takes PNG, JPEG, GIF and WebP images").waitFor();
    assert.equal(await p.locator(".image-thumb").count(), 0);
  });
});
