// Workspace trust: VS Code's own decision is darman's. The server gets
// vscode.workspace.isTrusted in initializationOptions.workspaceTrusted
// (false: the folder's darman.json, hooks, MCP servers and allow rules
// stay ignored), and, when the user grants trust later, darman.trust with
// {"editor": true}, which starts the agent again with them.
import * as vscode from "vscode";

/** The initializationOptions the server gets: the settings and the trust. */
export function initializationOptions(darman: unknown): { darman: unknown; workspaceTrusted: boolean } {
  return { darman, workspaceTrusted: vscode.workspace.isTrusted };
}

/** What the extension needs of the language client. */
export interface CommandSender {
  sendRequest(method: "workspace/executeCommand", params: { command: string; arguments: unknown[] }): Promise<unknown>;
}

/**
 * Follows a later grant of trust: the running server is told, once. The
 * returned disposable stops following.
 */
export function followTrustGrant(client: () => CommandSender | undefined, onError: (err: unknown) => void): vscode.Disposable {
  return vscode.workspace.onDidGrantWorkspaceTrust(() => {
    const c = client();
    if (c) {
      c.sendRequest("workspace/executeCommand", { command: "darman.trust", arguments: [{ editor: true }] }).catch(onError);
    }
  });
}
