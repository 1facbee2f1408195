// Permission cards: what they show, the answer each button posts, and
// keyboard use (focus on arrival, Tab through the buttons, Enter, Escape).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { skip, webview } from "./harness.mjs";

const S = "ses_perm";
const options = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
  { optionId: "reject_always", name: "Always reject", kind: "reject_always" },
];

function request(id, extra = {}) {
  return {
    type: "permission",
    request: {
      sessionId: S,
      turnId: "t1",
      requestId: id,
      toolCall: {
        toolCallId: `call-${id}`,
        title: "git status --short",
        permission: "bash",
        subjects: ["git status --short"],
        always: ["git status *"],
        reasons: ["commands outside the allow list are asked"],
        ...extra,
      },
      options,
    },
  };
}

describe("webview permission cards", { skip }, () => {
  const page = webview();

  async function start() {
    const w = await page();
    await w.send(
      { type: "session", sessionId: S, title: "", model: "", state: "running", updates: [] },
      { type: "update", sessionId: S, update: { sessionUpdate: "state_update", state: "requires_action" } },
    );
    return w;
  }

  test("a card says what is asked and what always grants", async () => {
    const w = await start();
    const p = w.page;
    await w.send(
      request("r1", {
        title: "edit main.go",
        permission: "edit",
        subjects: ["main.go"],
        always: ["edit main.go"],
        reasons: [],
        content: [{ type: "diff", uri: "file:///w/main.go", oldText: "x\n", newText: "y\nz\n" }],
      }),
    );
    const card = p.getByRole("group", { name: "darman asks: edit main.go" });
    await card.waitFor();
    assert.match(await card.innerText(), /Permission: edit/);
    assert.equal(await card.locator(".perm-subjects li").innerText(), "main.go");
    const always = card.getByRole("button", { name: "Always allow" });
    assert.equal(await always.evaluate((b) => document.getElementById(b.getAttribute("aria-describedby")).textContent), "Always allows: edit main.go");
    assert.equal(await card.locator(".added").innerText(), "+2");
    assert.equal(await card.locator(".removed").innerText(), "−1");
    await card.getByRole("button", { name: "Open diff of main.go" }).click();
    assert.equal((await w.waitPosted("openDiff")).newText, "y\nz\n");
    assert.match(await p.locator(".turn-status").innerText(), /darman is waiting for you/);
    await w.close();
  });

  test("each button posts its answer and the card goes", async () => {
    const w = await start();
    const p = w.page;
    const cases = [
      ["Allow once", "allow_once"],
      ["Always allow", "allow_always"],
      ["Reject", "reject_once"],
      ["Always reject", "reject_always"],
    ];
    for (const [i, [name, optionId]] of cases.entries()) {
      const id = `r${i}`;
      await w.send(request(id));
      const card = p.locator(`.permission[data-request="${id}"]`);
      await card.waitFor();
      await card.getByRole("button", { name, exact: true }).click();
      assert.deepEqual(await w.waitPosted("answerPermission"), { type: "answerPermission", requestId: id, optionId });
      await card.waitFor({ state: "detached" });
    }
    // Focus goes back to the prompt once no question is left.
    assert.ok(await p.getByRole("combobox", { name: "Message darman" }).evaluate((el) => el === document.activeElement));
    await w.close();
  });

  test("reject with a message", async () => {
    const w = await start();
    const p = w.page;
    await w.send(request("rm"));
    const card = p.locator('.permission[data-request="rm"]');
    await card.waitFor();
    const more = card.getByRole("button", { name: "Reject with message…" });
    await more.click();
    assert.equal(await more.getAttribute("aria-expanded"), "true");
    const why = card.getByRole("textbox", { name: "Why you reject (sent to the model)" });
    assert.ok(await why.evaluate((el) => el === document.activeElement));
    await p.keyboard.type("use git diff instead");
    await p.keyboard.press("Enter");
    assert.deepEqual(await w.waitPosted("answerPermission"), {
      type: "answerPermission",
      requestId: "rm",
      optionId: "reject_once",
      message: "use git diff instead",
    });
    await w.close();
  });

  test("keyboard: focus moves to the card, Tab reaches the buttons, Escape rejects", async () => {
    const w = await start();
    const p = w.page;
    const box = p.getByRole("combobox", { name: "Message darman" });
    await box.click();
    await p.keyboard.type("typing while it works");
    await w.send(request("k1"));
    const card = p.locator('.permission[data-request="k1"]');
    await card.waitFor();
    await p.waitForFunction(() => document.activeElement?.matches('.permission[data-request="k1"]'));
    // Tab walks the buttons in order; Enter on one answers.
    const seen = [];
    for (let i = 0; i < 3; i++) {
      await p.keyboard.press("Tab");
      seen.push(await p.evaluate(() => document.activeElement.textContent));
    }
    assert.deepEqual(seen, ["Allow once", "Always allow", "Reject"]);
    await p.keyboard.press("Shift+Tab");
    await p.keyboard.press("Enter");
    assert.deepEqual(await w.waitPosted("answerPermission"), { type: "answerPermission", requestId: "k1", optionId: "allow_always" });
    await card.waitFor({ state: "detached" });
    assert.equal(await box.inputValue(), "typing while it works", "the draft is untouched");

    // Escape on the card rejects; a second card takes the focus after the first.
    await w.send(request("k2"), request("k3"));
    await p.locator('.permission[data-request="k3"]').waitFor();
    await p.locator('.permission[data-request="k2"]').focus();
    await p.keyboard.press("Escape");
    assert.deepEqual(await w.waitPosted("answerPermission"), { type: "answerPermission", requestId: "k2", optionId: "reject_once" });
    await p.waitForFunction(() => document.activeElement?.matches('.permission[data-request="k3"]'));
    // Escape in the message box only closes the box.
    await p.locator('.permission[data-request="k3"]').getByRole("button", { name: "Reject with message…" }).focus();
    await p.keyboard.press("Enter");
    await p.keyboard.press("Escape");
    assert.ok(await p.locator('.permission[data-request="k3"] .perm-message').isHidden());
    assert.equal((await w.posted()).filter((m) => m.type === "answerPermission").length, 2);
    await p.keyboard.press("Escape");
    assert.deepEqual(await w.waitPosted("answerPermission"), { type: "answerPermission", requestId: "k3", optionId: "reject_once" });
    await w.close();
  });

  test("a question answered elsewhere drops its card", async () => {
    const w = await start();
    const p = w.page;
    await w.send(request("gone"));
    const card = p.locator('.permission[data-request="gone"]');
    await card.waitFor();
    await w.send({ type: "permissionClosed", requestId: "gone" });
    await card.waitFor({ state: "detached" });
    assert.equal((await w.posted()).filter((m) => m.type === "answerPermission").length, 0);
    await w.close();
  });
});
