// The texts of darman's diffs, served as read-only virtual documents: the
// text a file had before a tool changed it (the left side), and the text a
// tool proposes or wrote when the file does not hold it (the right side).

import * as vscode from "vscode";

export const diffScheme = "darman-before";
export const proposedScheme = "darman-proposed";

/** Keeps the last `limit` before-texts; older diffs show an empty left side. */
export class DiffContent implements vscode.TextDocumentContentProvider {
  private texts = new Map<string, string>();
  private next = 0;

  constructor(private readonly limit = 50) {}

  /**
   * put stores the text and returns the URI of a document holding it. The
   * path is the file's own, so VS Code picks the same language for both sides.
   */
  put(file: vscode.Uri, text: string, scheme = diffScheme): vscode.Uri {
    const id = String(++this.next);
    this.texts.set(id, text);
    if (this.texts.size > this.limit) {
      const oldest = this.texts.keys().next().value as string;
      this.texts.delete(oldest);
    }
    return vscode.Uri.from({ scheme, path: file.path, query: id });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.query) ?? "";
  }
}
