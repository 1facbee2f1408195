// What @ in the prompt box offers, and what a picked item becomes: the
// workspace's files, folders and symbols, the editor's selection, the
// workspace's problems and the last terminal command's output, each sent to darman as a reference of darman.prompt
// (docs/protocol.md, "References"), which reads files and folders itself.

import * as vscode from "vscode";
import type { ContextChip, Mention } from "../shared/protocol";
import { chipFor } from "./context";
import { lastRun, runText } from "./terminal";

const fileLimit = 20;
const symbolLimit = 10;
const problemLimit = 200;

function base(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** The workspace-relative path of a file, as a chip's detail. */
function shown(uri: vscode.Uri): string {
  return vscode.workspace.asRelativePath ? vscode.workspace.asRelativePath(uri, false) : uri.fsPath;
}

/** A glob that matches query in a name, its glob characters taken literally. */
function globOf(query: string): string {
  const q = query.replace(/[[\]{}*?!\\]/g, (c) => `[${c}]`);
  return q ? `**/*${q}*` : "**/*";
}

/**
 * mentionsFor is what @query offers, best first: the selection and the
 * problems (by name), then files and folders whose name has the query,
 * then workspace symbols.
 */
export async function mentionsFor(query: string): Promise<Mention[]> {
  const q = query.toLowerCase();
  const items: Mention[] = [];
  const named = (name: string) => !q || name.startsWith(q);
  const selection = chipFor(vscode.window.activeTextEditor);
  if (selection?.range && named("selection")) {
    items.push({ kind: "selection", label: "selection", detail: selection.label, uri: selection.uri, range: selection.range });
  }
  if (named("problems")) {
    const n = problems().length;
    if (n > 0) items.push({ kind: "problems", label: "problems", detail: `${n} in the workspace`, uri: "darman:problems" });
  }
  const run = lastRun();
  if (run && named("terminal")) {
    items.push({ kind: "terminal", label: "terminal", detail: `$ ${run.command}${run.done ? "" : " (running)"}`, uri: "darman:terminal" });
  }
  const files = await vscode.workspace.findFiles(globOf(query), undefined, fileLimit * 4);
  const folders = new Map<string, vscode.Uri>();
  for (const f of files) {
    // A folder whose name has the query: the one above a matching file.
    let dir = vscode.Uri.joinPath(f, "..");
    for (let i = 0; i < 4 && dir.path.length > 1; i++, dir = vscode.Uri.joinPath(dir, "..")) {
      if (q && base(dir.path).toLowerCase().includes(q) && !folders.has(dir.toString())) folders.set(dir.toString(), dir);
    }
  }
  const scored = files
    .map((f) => ({ f, name: base(f.path).toLowerCase() }))
    .sort((a, b) => Number(!a.name.startsWith(q)) - Number(!b.name.startsWith(q)) || a.f.path.length - b.f.path.length)
    .slice(0, fileLimit);
  for (const { f } of scored) items.push({ kind: "file", label: base(f.path), detail: shown(f), uri: f.toString() });
  for (const d of [...folders.values()].slice(0, 5)) items.push({ kind: "folder", label: `${base(d.path)}/`, detail: shown(d), uri: d.toString() });
  if (query.length >= 2) {
    const symbols = ((await vscode.commands.executeCommand("vscode.executeWorkspaceSymbolProvider", query)) ?? []) as vscode.SymbolInformation[];
    for (const s of symbols.slice(0, symbolLimit)) {
      const r = s.location.range;
      items.push({
        kind: "symbol",
        label: s.name,
        detail: `${shown(s.location.uri)}:${r.start.line + 1}`,
        uri: s.location.uri.toString(),
        range: { start: { line: r.start.line, character: 0 }, end: { line: r.end.line + 1, character: 0 } },
      });
    }
  }
  return items;
}

/** The workspace's errors and warnings, a line each. */
function problems(): string[] {
  const out: string[] = [];
  for (const [uri, ds] of vscode.languages.getDiagnostics() as unknown as [vscode.Uri, vscode.Diagnostic[]][]) {
    for (const d of ds) {
      if (d.severity > vscode.DiagnosticSeverity.Warning) continue;
      const sev = d.severity === vscode.DiagnosticSeverity.Error ? "error" : "warning";
      out.push(`${shown(uri)}:${d.range.start.line + 1}:${d.range.start.character + 1}: ${sev}${d.source ? ` (${d.source})` : ""}: ${d.message}`);
    }
  }
  return out.slice(0, problemLimit);
}

/** A darman.prompt reference for a picked chip (docs/protocol.md). */
export function referenceOf(chip: ContextChip): Record<string, unknown> {
  switch (chip.kind) {
    case "folder":
      return { kind: "folder", uri: chip.uri };
    case "problems": {
      const lines = problems();
      return { kind: "text", label: "Problems", text: lines.length ? lines.join("\n") : "(no errors or warnings)" };
    }
    case "terminal": {
      // The output as it is when the prompt is sent.
      const run = lastRun();
      return { kind: "text", label: run ? `Terminal ${run.terminal}` : "Terminal", text: run ? runText(run) : "(no command has run in a terminal)" };
    }
    default:
      return chip.range ? { uri: chip.uri, range: chip.range } : { uri: chip.uri };
  }
}
