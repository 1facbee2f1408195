// What the editor offers the chat: the selection or the file as a context
// chip, and the prompt of "fix problems in this file".

import * as vscode from "vscode";
import type { ContextChip } from "../shared/protocol";

function basename(uri: vscode.Uri): string {
  return uri.path.slice(uri.path.lastIndexOf("/") + 1);
}

/** The chip for an editor: its selection when there is one, else its file. Only files on disk. */
export function chipFor(editor: vscode.TextEditor | undefined): ContextChip | null {
  if (!editor || editor.document.uri.scheme !== "file") {
    return null;
  }
  const uri = editor.document.uri;
  const s = editor.selection;
  if (!s || s.isEmpty) {
    return { uri: uri.toString(), label: basename(uri) };
  }
  // A selection that ends at column 0 of a line does not include that line.
  const endLine = s.end.character === 0 && s.end.line > s.start.line ? s.end.line - 1 : s.end.line;
  const label = s.start.line === endLine ? `${basename(uri)}:${s.start.line + 1}` : `${basename(uri)}:${s.start.line + 1}-${endLine + 1}`;
  return {
    uri: uri.toString(),
    label,
    range: {
      start: { line: s.start.line, character: s.start.character },
      end: { line: s.end.line, character: s.end.character },
    },
  };
}

const severityName = ["error", "warning", "info", "hint"];

/**
 * fixProblemsPrompt asks darman to fix a file's errors and warnings, each
 * with its line, source and message; null when there is nothing to fix.
 */
export function fixProblemsPrompt(file: string, diagnostics: readonly vscode.Diagnostic[]): string | null {
  const problems = diagnostics
    .filter((d) => d.severity <= vscode.DiagnosticSeverity.Warning)
    .slice()
    .sort((a, b) => a.range.start.line - b.range.start.line || a.severity - b.severity);
  if (problems.length === 0) {
    return null;
  }
  const lines = problems.map((d) => {
    const code = typeof d.code === "object" && d.code !== null ? d.code.value : d.code;
    const source = d.source ? ` ${d.source}${code !== undefined ? `(${code})` : ""}` : "";
    return `- line ${d.range.start.line + 1}, ${severityName[d.severity]}${source}: ${d.message}`;
  });
  return `Fix the problems in ${file}:\n${lines.join("\n")}`;
}
