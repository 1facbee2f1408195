import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import * as vscode from "./stub/vscode";
import { record, testing } from "./stub/vscode";
import { applyEditAndSave, touchedUris } from "../src/edits";

type Edit = { range: { start: { line: number; character: number }; end: { line: number; character: number } }; newText: string };

/** What VS Code does with an applyEdit: changes open (or background-opened) documents, saves nothing. */
async function vscodeApplies(params: { edit: { changes?: Record<string, Edit[]>; documentChanges?: { textDocument: { uri: string }; edits: Edit[] }[] } }) {
  const all: [string, Edit[]][] = [
    ...Object.entries(params.edit.changes ?? {}),
    ...(params.edit.documentChanges ?? []).map((c) => [c.textDocument.uri, c.edits] as [string, Edit[]]),
  ];
  for (const [uri, edits] of all) {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    for (const e of edits) {
      doc.apply(e.range, e.newText);
    }
  }
  return { applied: true };
}

function files(): { dir: string; a: string; b: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "darman-edit-"));
  const a = path.join(dir, "a.go");
  const b = path.join(dir, "b with space.go");
  fs.writeFileSync(a, "package a\n\nvar x = 1\n");
  fs.writeFileSync(b, "package b\n");
  return { dir, a, b };
}

const line2 = { start: { line: 2, character: 8 }, end: { line: 2, character: 9 } };

test("an applied edit is saved, an open buffer and a closed file alike, before the answer", async () => {
  testing.reset();
  const { a, b } = files();
  testing.openEditor(a); // a.go is open; b is not
  const params = {
    label: "darman: edit",
    edit: {
      documentChanges: [
        { textDocument: { uri: pathToFileURL(a).href, version: 1 }, edits: [{ range: line2, newText: "2" }] },
        { textDocument: { uri: pathToFileURL(b).href, version: null }, edits: [{ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 0 } }, newText: "\nvar y = 3\n" }] },
      ],
    },
  };
  const res = await applyEditAndSave(params as never, vscodeApplies as never);
  assert.deepEqual(res, { applied: true });
  assert.equal(fs.readFileSync(a, "utf8"), "package a\n\nvar x = 2\n");
  assert.equal(fs.readFileSync(b, "utf8"), "package b\n\nvar y = 3\n");
  assert.deepEqual(record.saved, [a, b]);
  assert.ok(vscode.workspace.textDocuments.every((d) => !d.isDirty));
});

test("a document VS Code will not save answers applied: false with the file named", async () => {
  testing.reset();
  const { a } = files();
  testing.openEditor(a).document.saveFails = true;
  const res = await applyEditAndSave({ edit: { changes: { [pathToFileURL(a).href]: [{ range: line2, newText: "5" }] } } } as never, vscodeApplies as never);
  assert.equal(res.applied, false);
  assert.match(res.failureReason ?? "", /VS Code did not save .*a\.go/);
  assert.equal(fs.readFileSync(a, "utf8"), "package a\n\nvar x = 1\n", "the disk keeps the old text");
});

test("a save that answers false but wrote the file counts as saved", async () => {
  testing.reset();
  const { a } = files();
  testing.openEditor(a).document.saveFails = "answerFalse";
  const res = await applyEditAndSave({ edit: { changes: { [pathToFileURL(a).href]: [{ range: line2, newText: "7" }] } } } as never, vscodeApplies as never);
  assert.deepEqual(res, { applied: true });
  assert.equal(fs.readFileSync(a, "utf8"), "package a\n\nvar x = 7\n");
});

test("a save that answers false and lands a moment later counts as saved", async () => {
  testing.reset();
  const { a } = files();
  testing.openEditor(a).document.saveFails = "later";
  const res = await applyEditAndSave({ edit: { changes: { [pathToFileURL(a).href]: [{ range: line2, newText: "8" }] } } } as never, vscodeApplies as never);
  assert.deepEqual(res, { applied: true });
  assert.equal(fs.readFileSync(a, "utf8"), "package a\n\nvar x = 8\n");
});

test("an edit VS Code refused is answered as it was, and nothing is saved", async () => {
  testing.reset();
  const { a } = files();
  testing.openEditor(a);
  const refused = { applied: false, failureReason: "the document changed" };
  const res = await applyEditAndSave({ edit: { changes: { [pathToFileURL(a).href]: [{ range: line2, newText: "5" }] } } } as never, async () => refused);
  assert.deepEqual(res, refused);
  assert.deepEqual(record.saved, []);
});

test("touchedUris lists edited, created and renamed files once, not deleted ones", () => {
  const uris = touchedUris({
    documentChanges: [
      { kind: "create", uri: "file:///w/new.go" },
      { textDocument: { uri: "file:///w/new.go", version: null }, edits: [] },
      { kind: "rename", oldUri: "file:///w/old.go", newUri: "file:///w/renamed.go" },
      { kind: "delete", uri: "file:///w/gone.go" },
    ],
    changes: { "file:///w/plain.go": [] },
  } as never);
  assert.deepEqual(uris, ["file:///w/new.go", "file:///w/renamed.go", "file:///w/plain.go"]);
});
