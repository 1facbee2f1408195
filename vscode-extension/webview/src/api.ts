// The webview's only way out: VS Code's message API. acquireVsCodeApi may be
// called once per page load, so main.ts calls it and hands the result on.
import type { WebviewMessage } from "../../shared/protocol";

export interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare global {
  function acquireVsCodeApi(): VsCodeApi;
}
