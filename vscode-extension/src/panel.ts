// The chat panel: a WebviewView in darman's activity-bar container. It
// loads dist/webview.js and dist/webview.css under a strict content
// security policy and hands the webview's messages to the ChatController.

import * as vscode from "vscode";
import { randomBytes } from "node:crypto";
import type { PermissionRequest, WebviewMessage } from "../shared/protocol";
import { questionText, type ChatController, type ChatState } from "./chat";

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

/** The view's part of a WebviewView (what the provider touches). */
export type ChatView = Pick<vscode.WebviewView, "webview" | "visible" | "badge" | "onDidDispose">;

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view: ChatView | undefined;
  private badge: vscode.ViewBadge | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly chat: ChatController,
    private readonly onFirstPaint?: () => void,
  ) {}

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /**
   * showState puts the number of open questions on the view's badge, shown
   * on darman's activity-bar icon while the panel is hidden.
   */
  showState(s: ChatState): void {
    const n = s.waiting ?? 0;
    const tooltip = n ? `darman is waiting for you: ${s.question ?? "a permission"}` : "";
    if (n === (this.badge?.value ?? 0) && tooltip === (this.badge?.tooltip ?? "")) return;
    this.badge = n ? { value: n, tooltip } : undefined;
    if (this.view) this.view.badge = this.badge;
  }

  /**
   * notify tells a user who does not see the panel that a question waits,
   * with a button to it; the panel itself shows the card.
   */
  notify(request: PermissionRequest, reveal: () => void, window: Pick<typeof vscode.window, "showInformationMessage"> = vscode.window): void {
    if (this.visible) return;
    void Promise.resolve(window.showInformationMessage(`darman is waiting for you: ${questionText(request)}`, "Show the question")).then((choice) => {
      if (choice === "Show the question") reveal();
    });
  }

  resolveWebviewView(view: ChatView): void {
    this.view = view;
    view.badge = this.badge;
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
