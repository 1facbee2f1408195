// The chat panel: a WebviewView in darman's activity-bar container. It
// loads dist/webview.js and dist/webview.css under a strict content
// security policy and hands the webview's messages to the ChatController.

import * as vscode from "vscode";
import { randomBytes } from "node:crypto";
import type { WebviewMessage } from "../shared/protocol";
import type { ChatController } from "./chat";

export const viewId = "darman.chat";

/** html is the webview's page: no inline script, scripts only with the nonce. */
export function html(webview: Pick<vscode.Webview, "asWebviewUri" | "cspSource">, extensionUri: vscode.Uri, nonce: string): string {
  const dist = vscode.Uri.joinPath(extensionUri, "dist");
  const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.js"));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.css"));
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${style}">
<title>darman</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
}

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly chat: ChatController,
    private readonly onFirstPaint?: () => void,
  ) {}

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, "dist")],
    };
    view.webview.html = html(view.webview, this.extensionUri, randomBytes(18).toString("base64url"));
    this.chat.attach({ post: (m) => void view.webview.postMessage(m) });
    const sub = view.webview.onDidReceiveMessage((m: WebviewMessage) => {
      if (m?.type === "webviewReady") {
        this.onFirstPaint?.();
      }
      void this.chat.handle(m);
    });
    view.onDidDispose(() => {
      sub.dispose();
      this.chat.detach();
      this.view = undefined;
    });
  }
}
