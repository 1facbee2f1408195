// "Apply to file" of a code block in the panel, through darman's own edit
// path (darman.turn.apply, docs/protocol.md): the block's code becomes the
// file its fence names (the whole file), or replaces the active editor's
// selection, as an edit of the session's last turn. darman asks the edit
// permission as it does for its tools (the panel's card; the proposed diff
// opens in VS Code's diff editor, see ChatController.requestPermission),
// writes the file through the editor (workspace/applyEdit, saved), and the
// turn's Revert takes it back. Paths outside the workspace and secrets are
// refused by darman; the check here only says so before asking it.

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import type { Server } from "./chat";

/** darman.turn.apply's answer. */
export type ApplyResult = { applied: boolean; unchanged?: boolean; denied?: boolean; message: string; uri: string; turnId: string };

/** The file a code block applies to and its whole new text. */
export type ApplyTarget = { uri: vscode.Uri; before: string; text: string };

/** Applies code to file (a path relative to the workspace, or absolute inside it), else to the selection, as an edit of the session's last turn. */
export async function applyCodeBlock(server: Server, sessionId: string | undefined, code: string, file?: string): Promise<{ target: ApplyTarget; result: ApplyResult }> {
  if (!sessionId) {
    throw new Error("no session is open in the panel: a code block applies as an edit of the session's last turn");
  }
  const target = await targetOf(code, file);
  const result = (await server.executeCommand("darman.turn.apply", { sessionId, uri: target.uri.toString(), text: target.text })) as ApplyResult;
  return { target, result };
}

/** What applying code to file (or to the selection) writes. */
async function targetOf(code: string, file?: string): Promise<ApplyTarget> {
  if (!file) {
    const editor = selectionEditor();
    const doc = editor.document;
    const before = doc.getText();
    const start = doc.offsetAt(editor.selection.start);
    const end = doc.offsetAt(editor.selection.end);
    return { uri: doc.uri, before, text: before.slice(0, start) + code + before.slice(end) };
  }
  const uri = namedFile(file);
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  const before = open?.getText() ?? (await fs.promises.readFile(uri.fsPath, "utf8").catch(() => ""));
  // The whole file is the block's code, ending with a line break as files do.
  return { uri, before, text: code.endsWith("\n") ? code : code + "\n" };
}

/** The file a fence names, in the workspace. */
function namedFile(file: string): vscode.Uri {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 0) {
    throw new Error(`the code block names ${file}, but no folder is open to apply it in`);
  }
  const full = path.isAbsolute(file) ? path.normalize(file) : path.join(folders[0].uri.fsPath, file);
  const inside = folders.some((f) => {
    const rel = path.relative(f.uri.fsPath, full);
    return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
  });
  if (!inside) {
    throw new Error(`the code block names ${file}, which is outside the workspace; darman applies code blocks to the workspace's files only`);
  }
  return vscode.Uri.file(full);
}

/** The active editor with a selection, for a block whose fence names no file. */
function selectionEditor(): vscode.TextEditor {
  const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
  if (!editor) {
    throw new Error("the code block names no file and no editor is open: open the file and select the lines it replaces");
  }
  if (editor.selection.isEmpty) {
    throw new Error(
      `the code block names no file: select the lines of ${vscode.workspace.asRelativePath(editor.document.uri)} it replaces (or use Insert at cursor)`,
    );
  }
  return editor;
}
