// The panel's model picker against the real darman lsp: once darman is up,
// the host asks darman.model.list and offers what the endpoint serves (its
// GET /v1/models), not darman's catalog of the provider.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { HostMessage } from "../shared/protocol";
import { buildDarman, openPanel, startDarman, type Darman } from "./darman";
import { until } from "./applies";

let darman: Darman | undefined;
let skip: string | false = false;

before(async () => {
  const bin = buildDarman();
  if (!bin) {
    skip = "go is not installed (make deps installs the toolchain the tests need)";
    return;
  }
  darman = await startDarman(bin, { models: ["claude-sonnet-4-5", "claude-lab-7"], steps: [] }, {});
});

after(async () => {
  await darman?.stop();
});

test("the model picker offers the models the endpoint serves", async (t) => {
  if (skip || !darman) return t.skip(String(skip));
  const { posted } = await openPanel(darman);
  const ready = posted.filter((m): m is Extract<HostMessage, { type: "ready" }> => m.type === "ready").at(-1);
  assert.ok(ready && ready.models.some((m) => m.id === "anthropic/claude-haiku-4-5"), `initialize offers the catalog first: ${JSON.stringify(ready?.models.map((m) => m.id))}`);
  const served = await until(() => posted.find((m): m is Extract<HostMessage, { type: "models" }> => m.type === "models"), "the served models");
  assert.deepEqual(
    served.models.map((m) => m.id),
    ["anthropic/claude-lab-7", "anthropic/claude-sonnet-4-5"],
  );
});
