// Accessibility: in VS Code's light theme the panel's status colours are
// readable (4.5:1 against the side bar, WCAG AA for text), the messages are
// articles screen readers name, and the focus outline is 2 px.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { skip, webview } from "./harness.mjs";

const S = "ses_a11y";

// contrast is the WCAG contrast ratio of two CSS colours as computed.
function contrastIn(page, fgSelector) {
  return page.locator(fgSelector).first().evaluate((el) => {
    const parse = (c) => {
      const m = /rgba?\(([^)]+)\)/.exec(c) || /color\(srgb ([^)]+)\)/.exec(c);
      const v = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
      return c.startsWith("color(") ? v.slice(0, 3).map((x) => x * 255) : v.slice(0, 3);
    };
    const lum = ([r, g, b]) => {
      const f = (x) => ((x /= 255) <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const fg = lum(parse(getComputedStyle(el).color));
    const bg = lum(parse(getComputedStyle(document.body).backgroundColor));
    return (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
  });
}

describe("webview accessibility", { skip }, () => {
  const page = webview();

  test("light theme: status colours reach 4.5:1; messages are named articles; focus is 2 px", async () => {
    const w = await page({ theme: "light" });
    const p = w.page;
    await w.send({
      type: "session",
      sessionId: S,
      title: "",
      model: "",
      state: "idle",
      updates: [
        { sessionUpdate: "user_message_chunk", content: { type: "text", text: "fix it" } },
        { sessionUpdate: "tool_call", toolCallId: "a", title: "edit main.go", kind: "edit", status: "completed", content: [{ type: "diff", uri: "file:///w/main.go", oldText: "a\n", newText: "b\nc\n" }] },
        { sessionUpdate: "tool_call", toolCallId: "b", title: "go build", kind: "execute", status: "failed" },
        { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done." } },
        { sessionUpdate: "state_update", state: "failed", error: { code: "x", message: "the model went away" } },
      ],
    });
    for (const [what, sel] of [
      ["done", ".status-completed .tool-status"],
      ["failed", ".status-failed .tool-status"],
      ["lines added", ".diff-summary .added"],
      ["lines removed", ".diff-summary .removed"],
      ["the failed turn", ".failed-message"],
    ]) {
      const ratio = await contrastIn(p, sel);
      assert.ok(ratio >= 4.5, `${what} (${sel}) has contrast ${ratio.toFixed(2)}:1`);
    }
    // Screen readers: each message is an article named by who wrote it.
    assert.equal(await p.getByRole("article", { name: "You", exact: true }).count(), 1);
    assert.equal(await p.getByRole("article", { name: "darman", exact: true }).count(), 1);
    // The stream is a log (read out as it grows), the turn's status a polite live region.
    assert.equal(await p.getByRole("log", { name: "Conversation" }).count(), 1);
    assert.equal(await p.locator(".turn-status").evaluate((el) => `${el.getAttribute("role")} ${el.getAttribute("aria-live")}`), "status polite");
    // The focus outline is 2 px wide.
    await p.getByRole("button", { name: "Open diff of main.go" }).focus();
    await p.keyboard.press("Tab");
    await p.keyboard.press("Shift+Tab");
    const width = await p.getByRole("button", { name: "Open diff of main.go" }).evaluate((el) => getComputedStyle(el).outlineWidth);
    assert.equal(width, "2px");
    await w.close();
  });
});
