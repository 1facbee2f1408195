// What VS Code does with darman's workspace/applyEdit in the unit tests:
// the edits change the stub's documents (opened from disk when not open),
// unsaved; applyEditAndSave (src/edits.ts) then saves them. And until, to
// wait for what darman sends.

import * as vscode from "./stub/vscode";

/** Applies an LSP edit to the stub's documents as VS Code does: no save. */
export async function vscodeApplies(params: { edit: { documentChanges?: { textDocument: { uri: string }; edits: { range: never; newText: string }[] }[]; changes?: Record<string, { range: never; newText: string }[]> } }) {
  const all = [
    ...(params.edit.documentChanges ?? []).map((c) => [c.textDocument.uri, c.edits] as const),
    ...Object.entries(params.edit.changes ?? {}),
  ];
  for (const [uri, edits] of all) {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    for (const e of [...edits].reverse()) {
      doc.apply(e.range, e.newText);
    }
  }
  return { applied: true };
}

/** Polls until pred holds; fails with `what` after the deadline. */
export async function until<T>(pred: () => T | undefined | false, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = pred();
    if (v) {
      return v;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}
