// The status bar item: the model new turns use, a spinner while a turn
// runs, a bell when darman waits for the user's answer to a question, a
// warning when the server is not running, and (tooltip; an unlock
// icon when commands run unsandboxed) the OS sandbox of the model's
// commands. Clicking it opens the chat panel.

import * as vscode from "vscode";
import type { ChatState } from "./chat";

export function statusText(s: ChatState): { text: string; tooltip: string; warning: boolean } {
  const t = baseText(s);
  if (s.sandbox && !s.error) {
    // The model's commands run unsandboxed: say so where the user looks.
    if (!s.sandbox.active) t.text = `$(unlock) ${t.text}`;
    t.tooltip += `\n${s.sandbox.summary}`;
  }
  return t;
}

function baseText(s: ChatState): { text: string; tooltip: string; warning: boolean } {
  if (s.error) {
    return { text: "$(warning) darman", tooltip: `darman is not running: ${s.error}`, warning: true };
  }
  const model = s.model || "darman";
  if (s.waiting) {
    const more = s.waiting > 1 ? ` (and ${s.waiting - 1} more)` : "";
    return { text: "$(bell-dot) darman: waiting for you", tooltip: `darman asks: ${s.question ?? "a permission"}${more}. Click to answer in the chat.`, warning: true };
  }
  if (s.running > 0) {
    const turns = s.running === 1 ? "a turn is running" : `${s.running} turns are running`;
    return { text: `$(loading~spin) ${model}`, tooltip: `darman: ${turns} (${model})`, warning: false };
  }
  return { text: `$(comment-discussion) ${model}`, tooltip: `darman: new turns use ${model}. Click to open the chat.`, warning: false };
}

export class StatusBar implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;

  constructor(command: string) {
    this.item = vscode.window.createStatusBarItem("darman.status", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "darman";
    this.item.command = command;
    this.show({ model: "", running: 0 });
    this.item.show();
  }

  show(s: ChatState): void {
    const t = statusText(s);
    this.item.text = t.text;
    this.item.tooltip = t.tooltip;
    this.item.backgroundColor = t.warning ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
