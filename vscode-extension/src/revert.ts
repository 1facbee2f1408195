// The panel's "Revert turn" and "Redo": darman.turn.revert and
// darman.turn.redo of the panel's session (docs/protocol.md). The webview
// asks for a preview first, shows the files and conflicts, then asks again
// without `preview` to apply; darman's refusals (a running turn, nothing to
// revert) go back to the panel as darman said them.

import * as vscode from "vscode";
import type { HostMessage, RevertReport, RevertRequest } from "../shared/protocol";
import type { DiffContent } from "./diff";
import type { Server } from "./chat";

/** Runs the request and answers the message the webview shows: the report, or why darman refused. */
export async function runRevert(server: Server, r: RevertRequest, errorText: (err: unknown) => string): Promise<HostMessage> {
  const request: RevertRequest = { sessionId: r.sessionId, preview: r.preview === true };
  if (r.redo) request.redo = true;
  if (r.turnId) request.turnId = r.turnId;
  if (r.force) request.force = true;
  if (!r.sessionId) {
    return { type: "revertFailed", request, message: "No session is open in the panel: open the session whose turn to revert." };
  }
  const arg: Record<string, unknown> = { sessionId: r.sessionId, preview: request.preview };
  if (request.turnId) arg.turnId = request.turnId;
  if (request.force) arg.force = true;
  try {
    const report = (await server.executeCommand(r.redo ? "darman.turn.redo" : "darman.turn.revert", arg)) as RevertReport;
    return { type: "revertReport", request, report };
  } catch (err) {
    return { type: "revertFailed", request, message: errorText(err) };
  }
}

/** Opens a combined unified diff as a read-only document (its .diff path gives it diff colours). */
export async function openPatch(diffs: DiffContent, text: string, title: string): Promise<void> {
  const name = (title || "darman revert").replace(/[\\/:*?"<>|]+/g, " ").trim();
  const uri = diffs.put(vscode.Uri.file(`/${name}.diff`), text);
  await vscode.window.showTextDocument(uri, { preview: true, preserveFocus: true });
}
