// Terminal output as a reference: the commands run in VS Code's
// terminals and what they printed, read through the terminal's shell
// integration (VS Code 1.93 and later, in a shell it integrates: bash,
// zsh, fish, PowerShell). The extension targets VS Code 1.91, whose API
// lacks these events: they are looked up at run time, and without them
// @ offers no terminal.

import * as vscode from "vscode";

/** A command a terminal ran and its output, as plain text. */
export type TerminalRun = { terminal: string; command: string; output: string; exitCode?: number; done: boolean };

// The part of VS Code 1.93's shell integration API read here.
type ShellExecution = { commandLine?: { value?: string }; read(): AsyncIterable<string> };
type ShellExecutionEvent = { terminal: { name: string }; execution: ShellExecution; exitCode?: number };
type ShellEvents = {
  onDidStartTerminalShellExecution?: (l: (e: ShellExecutionEvent) => unknown) => vscode.Disposable;
  onDidEndTerminalShellExecution?: (l: (e: ShellExecutionEvent) => unknown) => vscode.Disposable;
};

// The last runs kept, and the output kept of each (its end: where a
// failure is).
const keptRuns = 10;
const keptChars = 32 * 1024;

const runs: TerminalRun[] = [];
const byExecution = new Map<ShellExecution, TerminalRun>();

/** Whether this VS Code tells extensions what its terminals run. */
export function terminalsReadable(): boolean {
  return typeof (vscode.window as unknown as ShellEvents).onDidStartTerminalShellExecution === "function";
}

/** watchTerminals starts keeping the terminals' last runs; dispose stops it. */
export function watchTerminals(log?: (line: string) => void): vscode.Disposable {
  const w = vscode.window as unknown as ShellEvents;
  if (!w.onDidStartTerminalShellExecution || !w.onDidEndTerminalShellExecution) {
    log?.("@terminal is off: this VS Code does not tell extensions what its terminals run (VS Code 1.93 or later does)");
    return { dispose() {} };
  }
  const started = w.onDidStartTerminalShellExecution((e) => {
    log?.(`terminal ${e.terminal.name}: a command started`);
    const run: TerminalRun = { terminal: e.terminal.name, command: (e.execution.commandLine?.value ?? "").trim(), output: "", done: false };
    runs.push(run);
    if (runs.length > keptRuns) runs.splice(0, runs.length - keptRuns);
    byExecution.set(e.execution, run);
    void (async () => {
      let raw = "";
      try {
        for await (const data of e.execution.read()) {
          raw = (raw + data).slice(-4 * keptChars);
          run.output = plainText(raw).slice(-keptChars);
        }
      } catch (err) {
        // The terminal went away mid-read: what came is kept.
        log?.(`terminal ${e.terminal.name}: reading the output of ${run.command} failed: ${String(err)}`);
      }
    })();
  });
  const ended = w.onDidEndTerminalShellExecution((e) => {
    const run = byExecution.get(e.execution);
    byExecution.delete(e.execution);
    if (!run) return;
    run.exitCode = e.exitCode;
    run.done = true;
  });
  return {
    dispose() {
      started.dispose();
      ended.dispose();
    },
  };
}

/** The last command a terminal ran (the running one included), or undefined. */
export function lastRun(): TerminalRun | undefined {
  return runs.at(-1);
}

/** The reference text of a run: the command line, then its output. */
export function runText(run: TerminalRun): string {
  const status = !run.done ? " (still running)" : run.exitCode === undefined ? "" : ` (exit code ${run.exitCode})`;
  const cut = run.output.length >= keptChars ? "[… earlier output not kept]\n" : "";
  return `$ ${run.command}${status}\n${cut}${run.output.trimEnd()}`;
}

/**
 * plainText is terminal output as a reader sees it: escape sequences
 * (colours, cursor moves, the shell integration's own marks) dropped,
 * CRLF as LF, and a line rewritten after a lone CR (a progress bar)
 * keeping its last state.
 */
export function plainText(s: string): string {
  const noEsc = s
    // OSC ... BEL or ST (titles, shell integration marks, links)
    .replace(/\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, "")
    // CSI sequences (colours, cursor and erase)
    .replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, "")
    // other two-byte escapes
    .replace(/\x1b[@-Z\\-_]/g, "");
  return noEsc
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map((line) => line.slice(line.lastIndexOf("\r") + 1))
    .join("\n");
}
