// The left side of darman's diffs: the text a file had before a tool
// changed it, served as a read-only virtual document.

import * as vscode from "vscode";

export const diffScheme = "darman-before";

/** Keeps the last `limit` before-texts; older diffs show an empty left side. */
export class DiffContent implements vscode.TextDocumentContentProvider {
  private texts = new Map<string, string>();
  private next = 0;

  constructor(private readonly limit = 50) {}

  /**
   * put stores the text and returns the URI of a document holding it. The
   * path is the file's own, so VS Code picks the same language for both sides.
   */
  put(file: vscode.Uri, text: string): vscode.Uri {
    const id = String(++this.next);
    this.texts.set(id, text);
    if (this.texts.size > this.limit) {
      const oldest = this.texts.keys().next().value as string;
      this.texts.delete(oldest);
    }
    return vscode.Uri.from({ scheme: diffScheme, path: file.path, query: id });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.query) ?? "";
  }
}
