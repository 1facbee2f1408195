// "Apply to file" of a code block in the panel: the block's code goes into
// the file its fence names (the whole file), or over the active editor's
// selection, as an edit of the editor's document — unsaved, undone with
// the editor's own Undo — and VS Code's diff editor then shows what
// changed, the file itself on the right (edit, undo or save it there).
// Nothing is written to disk: the user saves.

import * as path from "node:path";
import * as vscode from "vscode";
import type { DiffContent } from "./diff";

/** Applies code to file (a path relative to the workspace, or absolute inside it), else to the selection. */
export async function applyCodeBlock(diffs: DiffContent, code: string, file?: string): Promise<void> {
  const target = file ? await namedTarget(file) : selectionTarget();
  // A file that does not exist yet opens as an untitled document that
  // saves to its path: still nothing on disk until the user saves.
  const uri = target.exists ? target.uri : target.uri.with({ scheme: "untitled" });
  const doc = await vscode.workspace.openTextDocument(uri);
  const before = doc.getText();
  const range = target.selection ?? new vscode.Range(doc.positionAt(0), doc.positionAt(before.length));
  // The whole file is the block's code, ending with a line break as files do.
  const text = !target.selection && !code.endsWith("\n") ? code + "\n" : code;
  // Through an editor of the document, not a workspace edit: VS Code saves
  // a workspace edit's files that no editor shows (files.refactoring.autoSave).
  const editor = await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: true });
  if (!(await editor.edit((b) => b.replace(range, text)))) {
    throw new Error(`VS Code did not apply the code block to ${vscode.workspace.asRelativePath(target.uri)}`);
  }
  const name = target.uri.path.split("/").pop();
  await vscode.commands.executeCommand("vscode.diff", diffs.put(target.uri, before), uri, `${name}: code block applied (unsaved)`, { preview: true });
}

type Target = { uri: vscode.Uri; exists: boolean; selection?: vscode.Range };

/** The file a fence names, in the workspace; refused outside it. */
async function namedTarget(file: string): Promise<Target> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 0) {
    throw new Error(`the code block names ${file}, but no folder is open to apply it in`);
  }
  const root = folders[0].uri;
  const full = path.isAbsolute(file) ? path.normalize(file) : path.join(root.fsPath, file);
  const inside = folders.some((f) => {
    const rel = path.relative(f.uri.fsPath, full);
    return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
  });
  if (!inside) {
    throw new Error(`the code block names ${file}, which is outside the workspace; darman applies code blocks to the workspace's files only`);
  }
  const uri = vscode.Uri.file(full);
  const open = vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString());
  const exists =
    open ||
    (await vscode.workspace.fs.stat(uri).then(
      () => true,
      () => false,
    ));
  return { uri, exists };
}

/** The active editor's selection, for a block whose fence names no file. */
function selectionTarget(): Target {
  const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
  if (!editor) {
    throw new Error("the code block names no file and no editor is open: open the file and select the lines it replaces");
  }
  if (editor.selection.isEmpty) {
    throw new Error(
      `the code block names no file: select the lines of ${vscode.workspace.asRelativePath(editor.document.uri)} it replaces (or use Insert at cursor)`,
    );
  }
  return { uri: editor.document.uri, exists: true, selection: editor.selection };
}
