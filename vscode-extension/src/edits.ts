// workspace/applyEdit with the applyEditAndSave opt-in: darman reads the
// files from disk right after the answer, so the client applies the edit,
// saves every document it touched, and only then answers applied: true.
// vscode-languageclient applies edits but never saves; this middleware adds
// the save.

import * as fs from "node:fs";
import * as vscode from "vscode";
import type { ApplyWorkspaceEditParams, ApplyWorkspaceEditResult, WorkspaceEdit } from "vscode-languageclient";

/** The URIs an LSP WorkspaceEdit changes or creates, each once, in order. */
export function touchedUris(edit: WorkspaceEdit): string[] {
  const uris: string[] = [];
  const add = (uri: string) => {
    if (!uris.includes(uri)) {
      uris.push(uri);
    }
  };
  for (const change of edit.documentChanges ?? []) {
    if ("textDocument" in change) {
      add(change.textDocument.uri);
    } else if (change.kind === "create") {
      add(change.uri);
    } else if (change.kind === "rename") {
      add(change.newUri);
    }
    // A deleted file has nothing to save.
  }
  for (const uri of Object.keys(edit.changes ?? {})) {
    add(uri);
  }
  return uris;
}

type Next = (params: ApplyWorkspaceEditParams) => unknown;

/** How long a save that answered false may take to show up on disk. */
export const saveGraceMs = 5_000;

/**
 * applyEditAndSave is the LanguageClient's handleApplyEdit middleware: it
 * lets the client apply the edit (next), then saves each touched document.
 * A document that cannot be saved turns the answer into applied: false with
 * the reason, so darman tells the model instead of reading a stale file.
 */
export async function applyEditAndSave(params: ApplyWorkspaceEditParams, next: Next): Promise<ApplyWorkspaceEditResult> {
  const result = (await next(params)) as ApplyWorkspaceEditResult | undefined;
  if (!result || !result.applied) {
    return result ?? { applied: false, failureReason: "VS Code did not apply the edit" };
  }
  for (const uri of touchedUris(params.edit)) {
    const target = vscode.Uri.parse(uri);
    const key = target.toString();
    let doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
    if (!doc) {
      try {
        doc = await vscode.workspace.openTextDocument(target);
      } catch (err) {
        return { applied: false, failureReason: `the edit was applied but ${target.fsPath} could not be opened to save it: ${String(err)}` };
      }
    }
    if (!doc.isDirty) {
      continue;
    }
    let saved = false;
    try {
      saved = await doc.save();
    } catch (err) {
      return { applied: false, failureReason: `the edit was applied but saving ${target.fsPath} failed: ${String(err)}` };
    }
    // save() answers false now and then although the file is written
    // moments later (seen in code-server 4.139 on a loaded machine, with
    // the file open in an editor): what counts is the disk holding the
    // document's text, or VS Code reporting the save, within a few seconds.
    if (!saved && !onDisk(doc) && !(await savedSoon(doc, saveGraceMs))) {
      return { applied: false, failureReason: `the edit was applied but VS Code did not save ${target.fsPath}` };
    }
  }
  return result;
}

/** Whether a file's document text is what its file on disk holds. */
function onDisk(doc: vscode.TextDocument): boolean {
  if (doc.uri.scheme !== "file") {
    return false;
  }
  try {
    return fs.readFileSync(doc.uri.fsPath, "utf8") === doc.getText();
  } catch {
    return false;
  }
}

/** Resolves true when VS Code saves the document or the disk holds its text, false after ms. */
function savedSoon(doc: vscode.TextDocument, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const key = doc.uri.toString();
    const finish = (ok: boolean) => {
      clearTimeout(timer);
      clearInterval(poll);
      sub.dispose();
      resolve(ok);
    };
    const sub = vscode.workspace.onDidSaveTextDocument((d) => {
      if (d.uri.toString() === key) {
        finish(true);
      }
    });
    // The disk is checked too: a save by another path fires no event here.
    const poll = setInterval(() => onDisk(doc) && finish(true), 100);
    const timer = setTimeout(() => finish(onDisk(doc)), ms);
  });
}
