// darman/elicit answered with VS Code's own prompts: which prompt each
// field gets, what the answer carries, and Escape, Decline and a withdrawn
// request.

import { test } from "node:test";
import assert from "node:assert/strict";
import { record, testing } from "./stub/vscode";
import { answerElicit, validate, type ElicitRequest } from "../src/elicit";

const form: ElicitRequest = {
  requestId: "elicit_1",
  server: "crm",
  mode: "form",
  message: "Who are you?",
  fields: [
    { name: "age", type: "integer", required: true, minimum: 0, maximum: 150 },
    { name: "name", title: "Your name", type: "string", required: true, default: "Ada" },
    { name: "newsletter", type: "boolean", required: false },
    { name: "team", type: "string", required: true, enum: ["red", "blue"], default: "blue" },
    { name: "tags", type: "array", required: false, enum: ["a", "b", "c"] },
  ],
};

test("a form: a modal says who asks, then an input box per text or number field and a quick pick per choice", async () => {
  testing.reset();
  testing.answer("Answer", "abc", "36.5", "999", "36", "Grace", "Skip", "red", ["a", "c"]);
  const result = await answerElicit(form);
  assert.deepEqual(result, { action: "accept", content: { age: 36, name: "Grace", team: "red", tags: ["a", "c"] } });

  const [modal, age, name, newsletter, team, tags] = record.prompts;
  assert.equal(modal.kind, "message");
  assert.match(modal.text!, /MCP server crm asks: Who are you\?/);
  assert.equal(modal.options?.modal, true);
  assert.deepEqual(modal.items, ["Answer", "Decline"]);

  assert.equal(age.kind, "inputBox");
  assert.deepEqual(age.invalid, ["age must be a number.", "age must be a whole number.", "age must be at most 150."]);
  assert.equal(name.kind, "inputBox");
  assert.equal(name.options?.value, "Ada", "the default is the box's starting text");
  assert.equal(name.options?.prompt, "Your name");
  assert.equal(newsletter.kind, "quickPick");
  assert.deepEqual(newsletter.items, ["Yes", "No", "Skip"], "an optional yes/no can be skipped");
  assert.equal(team.kind, "quickPick");
  assert.deepEqual(team.items, ["blue", "red"], "the default comes first; a required choice has no Skip");
  assert.equal(tags.options?.canPickMany, true);
  assert.equal(record.prompts.length, 6);
});

test("a boolean answers true or false, a numeric choice a number", async () => {
  testing.reset();
  testing.answer("Answer", "No", "2");
  const result = await answerElicit({
    requestId: "elicit_2",
    server: "s",
    mode: "form",
    message: "m",
    fields: [
      { name: "ok", type: "boolean", required: true },
      { name: "level", type: "integer", required: true, enum: ["1", "2"] },
    ],
  });
  assert.deepEqual(result, { action: "accept", content: { ok: false, level: 2 } });
});

test("Decline declines; Escape on the modal or on any field cancels", async () => {
  testing.reset();
  testing.answer("Decline");
  assert.deepEqual(await answerElicit(form), { action: "decline" });
  assert.equal(record.prompts.length, 1);

  testing.reset();
  testing.answer(undefined);
  assert.deepEqual(await answerElicit(form), { action: "cancel" });

  testing.reset();
  testing.answer("Answer", "36", undefined);
  assert.deepEqual(await answerElicit(form), { action: "cancel" });
  assert.equal(record.prompts.length, 3, "nothing is asked after Escape");
});

test("a request darman withdraws is answered cancel, and no later field is asked", async () => {
  testing.reset();
  const token = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) };
  testing.answer("Answer", "36");
  const pending = answerElicit(form, token as never);
  token.isCancellationRequested = true;
  assert.deepEqual(await pending, { action: "cancel" });
  assert.equal(record.prompts.length, 1, "only the modal was shown");
});

test("a URL opens only after the user chose Open", async () => {
  const req: ElicitRequest = { requestId: "elicit_3", server: "auth", mode: "url", message: "Sign in", url: "https://auth.example.com/x" };
  testing.reset();
  testing.answer("Open");
  assert.deepEqual(await answerElicit(req), { action: "accept" });
  assert.deepEqual(record.opened, ["https://auth.example.com/x"]);
  assert.equal(record.prompts[0].options?.modal, true);
  assert.match(String(record.prompts[0].options?.detail), /Sign in[\s\S]*https:\/\/auth\.example\.com\/x/);

  testing.reset();
  testing.answer("Decline");
  assert.deepEqual(await answerElicit(req), { action: "decline" });
  testing.reset();
  testing.answer(undefined);
  assert.deepEqual(await answerElicit(req), { action: "cancel" });
  assert.deepEqual(record.opened, [], "nothing is opened without Open");

  testing.reset();
  testing.openExternalFails();
  testing.answer("Open");
  assert.deepEqual(await answerElicit(req), { action: "accept" });
  assert.match(record.messages.at(-1)!.text, /could not open https:\/\/auth\.example\.com\/x/);
});

test("only http and https URLs are offered: a command: or file: URL is declined unasked", async () => {
  for (const url of ["command:workbench.action.terminal.new", "file:///etc/passwd"]) {
    testing.reset();
    assert.deepEqual(await answerElicit({ requestId: "e", server: "evil", mode: "url", message: "", url }), { action: "decline" });
    assert.equal(record.prompts.length, 0);
    assert.deepEqual(record.opened, []);
    assert.match(record.messages.at(-1)!.text, /only http and https/);
  }
});

test("validateInput: required, bounds and formats", () => {
  assert.equal(validate({ name: "n", type: "string", required: true }, "  "), "n is required.");
  assert.equal(validate({ name: "n", type: "string", required: false }, ""), undefined);
  assert.equal(validate({ name: "x", type: "number", required: true, minimum: 1.5 }, "1"), "x must be at least 1.5.");
  assert.equal(validate({ name: "x", type: "number", required: true, minimum: 1.5 }, "2.5"), undefined);
  assert.equal(validate({ name: "e", type: "string", required: true, format: "email" }, "ada"), "e must be an email address.");
  assert.equal(validate({ name: "e", type: "string", required: true, format: "email" }, "ada@example.com"), undefined);
  assert.equal(validate({ name: "d", type: "string", required: true, format: "date" }, "2026-11-30"), undefined);
  assert.equal(validate({ name: "d", type: "string", required: true, format: "date" }, "30/11/2026"), "d must be a date (YYYY-MM-DD).");
});
