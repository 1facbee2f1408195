// @ in the prompt box: the text after it goes to the host (mentionQuery),
// its answer is offered, a pick becomes a chip (the "@query" typed goes),
// and the picked chips go with the prompt, after the editor's own chip,
// with their kind, then leave the box. A stale answer is dropped.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { skip, webview } from "./harness.mjs";

const S = "ses_at";
const sel = { start: { line: 2, character: 0 }, end: { line: 5, character: 0 } };
const items = [
  { kind: "selection", label: "selection", detail: "util.go:3-5", uri: "file:///w/util.go", range: sel },
  { kind: "file", label: "main.go", detail: "cmd/main.go", uri: "file:///w/cmd/main.go" },
  { kind: "folder", label: "cmd/", detail: "cmd", uri: "file:///w/cmd" },
  { kind: "symbol", label: "mainLoop", detail: "cmd/main.go:40", uri: "file:///w/cmd/main.go", range: { start: { line: 39, character: 0 }, end: { line: 52, character: 0 } } },
];

describe("webview @ mentions", { skip }, () => {
  const page = webview();

  for (const theme of ["light", "dark"]) {
    test(`@ offers what the host found, a pick is a chip that goes with the prompt (${theme})`, async () => {
      const w = await page({ theme: theme === "dark" ? "dark" : undefined, viewport: { width: 420, height: 420 } });
      const p = w.page;
      await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] }, { type: "context", chip: { uri: "file:///w/util.go", label: "util.go" } });
      const box = p.getByRole("combobox", { name: "Message darman" });
      await box.click();
      await p.keyboard.type("explain @ma");
      const q = await w.waitPosted("mentionQuery");
      assert.equal(q.query, "ma");
      // An answer to an older query is dropped.
      await w.send({ type: "mentions", id: q.id - 1, items: [{ kind: "file", label: "old.go", uri: "file:///w/old.go" }] });
      assert.ok(await p.locator("#command-completions").isHidden());
      await w.send({ type: "mentions", id: q.id, items });
      const list = p.getByRole("listbox", { name: "Attach" });
      await list.waitFor();
      assert.deepEqual(await list.getByRole("option").allInnerTexts().then((t) => t.map((x) => x.split(/\s/)[0])), ["@selection", "@main.go", "@cmd/", "@mainLoop"]);
      await w.shot("mentions");
      await p.keyboard.press("ArrowDown");
      await p.keyboard.press("Enter");
      assert.equal(await box.inputValue(), "explain ", "the typed @ma went");
      assert.ok(await list.isHidden());
      // A second pick, by its first item.
      await p.keyboard.type("@sel");
      const q2 = await w.waitPosted("mentionQuery");
      await p.waitForFunction((id) => window.__posted.some((m) => m.type === "mentionQuery" && m.id >= id && m.query === "sel"), q2.id);
      const last = await w.waitPosted("mentionQuery");
      await w.send({ type: "mentions", id: last.id, items: [items[0]] });
      await list.waitFor();
      await p.keyboard.press("Tab");
      const chips = p.getByRole("list", { name: "Context sent with the prompt" }).getByRole("listitem");
      assert.deepEqual(await chips.allInnerTexts(), ["util.go", "@main.go", "@selection util.go:3-5"]);
      await p.keyboard.type("please");
      await p.keyboard.press("Enter");
      const sent = await w.waitPosted("prompt");
      assert.equal(sent.text, "explain please");
      assert.deepEqual(sent.context, [
        { uri: "file:///w/util.go", label: "util.go" },
        { uri: "file:///w/cmd/main.go", label: "main.go", kind: "file" },
        { uri: "file:///w/util.go", label: "selection util.go:3-5", kind: "selection", range: sel },
      ]);
      assert.deepEqual(await chips.allInnerTexts(), ["util.go"], "picked chips went with the prompt; the editor's stays");
      await w.close();
    });
  }

  test("Escape closes the @ list and nothing is picked; a removed chip does not go", async () => {
    const w = await page();
    const p = w.page;
    await w.send({ type: "session", sessionId: S, title: "", model: "", state: "idle", updates: [] });
    const box = p.getByRole("combobox", { name: "Message darman" });
    await box.click();
    await p.keyboard.type("@cmd");
    const q = await w.waitPosted("mentionQuery");
    await p.waitForTimeout(150);
    const latest = await w.waitPosted("mentionQuery");
    await w.send({ type: "mentions", id: latest.id, items });
    await p.getByRole("listbox", { name: "Attach" }).waitFor();
    await p.keyboard.press("Escape");
    assert.ok(await p.locator("#command-completions").isHidden());
    assert.equal(await box.inputValue(), "@cmd");
    assert.ok(q.id <= latest.id);
    await box.fill("");
    await p.keyboard.type("@m");
    await p.waitForTimeout(150);
    const again = await w.waitPosted("mentionQuery");
    await w.send({ type: "mentions", id: again.id, items: [items[1]] });
    await p.keyboard.press("Enter");
    await p.getByRole("button", { name: "Remove main.go from the context" }).click();
    await p.keyboard.type("go");
    await p.keyboard.press("Enter");
    assert.deepEqual((await w.waitPosted("prompt")).context, []);
    await w.close();
  });
});
