// Revert and redo of a turn's file changes (darman.turn.revert / .redo
// through the host). A turn the live stream showed changing files gets a
// "Revert" action under it; any session gets "Revert last turn" at the end
// of the stream (darman picks the last turn that changed files), and "Redo"
// once something was reverted. Every action asks for a preview first: the
// card lists the files and what happens to each, the conflicts (files
// changed since, left alone) with darman's reason and diff, and the files
// too large to keep; the user confirms, reverts over the conflicts anyway,
// or closes it. darman's refusals are shown as it said them.
import type { HostMessage, RevertReport, RevertRequest, WebviewMessage } from "../../shared/protocol";
import { button, h } from "./dom";
import { icon } from "./icons";

type Post = (m: WebviewMessage) => void;

const actionText = { restore: "restored", create: "created again", delete: "deleted" } as const;
const actionTextRedo = { restore: "changed back", create: "created again", delete: "deleted again" } as const;

export class Reverts {
  readonly el: HTMLElement;
  private bar: HTMLElement;
  private card: HTMLElement;
  private sessionId?: string;
  private redoable = false;
  private offer = false; // no turn runs and the session has turns

  constructor(private post: Post) {
    this.bar = h("div", { class: "revert-bar", hidden: true });
    this.card = h("section", { class: "revert-card", hidden: true, "aria-label": "Revert or redo" });
    this.el = h("div", { class: "reverts" }, this.card, this.bar);
  }

  /** Called after every batch: the bar's actions, while no turn runs; another session drops what was offered. */
  setIdle(sessionId: string | undefined, idle: boolean, hasTurns: boolean): void {
    if (sessionId !== this.sessionId) {
      this.sessionId = sessionId;
      this.redoable = false;
      this.closeCard();
    }
    this.offer = idle && hasTurns;
    this.renderBar();
  }

  private renderBar(): void {
    if (!this.offer || !this.sessionId || !this.card.hidden) {
      this.bar.hidden = true;
      return;
    }
    const key = `${this.redoable}`;
    if (!this.bar.hidden && this.bar.dataset.key === key) return;
    this.bar.dataset.key = key;
    this.bar.hidden = false;
    this.bar.replaceChildren(button("Revert last turn", { class: "link revert-last", title: "Take back the file changes of the last turn that changed files" }, () => this.start({})));
    if (this.redoable) this.bar.append(button("Redo", { class: "link revert-redo", title: "Put back what the last revert took away" }, () => this.start({ redo: true })));
  }

  /** The small action under a finished turn that changed files. */
  turnAction(turnId: string): HTMLElement {
    return h(
      "div",
      { class: "entry turn-actions" },
      button("Revert", { class: "link revert-turn", "data-turn": turnId, "aria-label": "Revert this turn", title: "Take back the file changes of this turn and the turns after it" }, () => this.start({ turnId }), icon("history"), h("span", null, "Revert")),
    );
  }

  /** Asks darman for the preview of a revert (or redo). */
  start(r: { turnId?: string; redo?: boolean }): void {
    if (!this.sessionId) return;
    this.ask({ sessionId: this.sessionId, preview: true, ...(r.turnId ? { turnId: r.turnId } : {}), ...(r.redo ? { redo: true } : {}) });
  }

  private ask(r: RevertRequest): void {
    this.post({ type: "revert", ...r });
    this.show(h("div", { class: "revert-status", role: "status" }, r.preview ? "Asking darman what would change…" : r.redo ? "Redoing…" : "Reverting…"));
  }

  /** revertReport and revertFailed from the host. */
  handle(m: Extract<HostMessage, { type: "revertReport" | "revertFailed" }>): void {
    if (!m.request || m.request.sessionId !== this.sessionId) return;
    if (m.type === "revertFailed") {
      const what = m.request.redo ? "redo" : "revert";
      this.show(
        h("div", { class: "revert-error", role: "alert" }, icon("error"), h("span", null, `darman could not ${what}: ${m.message}`)),
        h("div", { class: "revert-actions" }, button("Close", { class: "secondary revert-close" }, () => this.closeCard())),
      );
      return;
    }
    const report = m.report;
    if (!report || !Array.isArray(report.files)) return;
    if (report.applied) this.applied(m.request, report);
    else this.preview(m.request, report);
  }

  private preview(r: RevertRequest, report: RevertReport): void {
    const verb = r.redo ? "Redo" : "Revert";
    const conflicts = report.conflicts ?? [];
    const confirm = { sessionId: r.sessionId, preview: false, ...(r.redo ? { redo: true } : {}), ...(report.turnId || r.turnId ? { turnId: report.turnId || r.turnId } : {}) };
    const nothing = report.files.length === 0 && conflicts.length === 0;
    const title = nothing
      ? `Nothing to ${verb.toLowerCase()}: the files are as they would be.`
      : `${verb} ${turnsText(report)}? ${count(report.files.length)} would change.`;
    const actions = h("div", { class: "revert-actions" });
    if (report.files.length > 0) actions.append(button(verb, { class: "primary revert-confirm" }, () => this.ask(confirm)));
    if (conflicts.length > 0) actions.append(button(`${verb} anyway`, { class: "secondary revert-force", title: "Also overwrite the files changed since" }, () => this.ask({ ...confirm, force: true })));
    if (report.diff) actions.append(button("Show diff", { class: "secondary revert-diff" }, () => this.post({ type: "openPatch", text: report.diff, title: `darman ${verb.toLowerCase()} preview` })));
    actions.append(button(nothing ? "Close" : "Cancel", { class: "secondary revert-close" }, () => this.closeCard()));
    this.show(h("div", { class: "revert-title" }, icon("history"), h("span", null, title)), this.files(report, !!r.redo), this.conflicts(conflicts, false), this.large(report), actions);
  }

  private applied(r: RevertRequest, report: RevertReport): void {
    const conflicts = report.conflicts ?? [];
    this.redoable = !r.redo;
    const done = r.redo ? `Redone: ${count(report.files.length)} changed back.` : `Reverted ${turnsText(report)}: ${count(report.files.length)} restored.`;
    const actions = h("div", { class: "revert-actions" });
    if (conflicts.length > 0) {
      actions.append(
        button(`${r.redo ? "Redo" : "Revert"} anyway`, { class: "secondary revert-force", title: "Also overwrite the files changed since" }, () =>
          this.ask({ sessionId: r.sessionId, preview: false, force: true, ...(r.redo ? { redo: true } : {}), ...(report.turnId || r.turnId ? { turnId: report.turnId || r.turnId } : {}) }),
        ),
      );
    }
    if (!r.redo) actions.append(button("Redo", { class: "secondary revert-redo" }, () => this.start({ redo: true })));
    actions.append(button("Close", { class: "secondary revert-close" }, () => this.closeCard()));
    this.show(h("div", { class: "revert-title", role: "status" }, icon("completed"), h("span", null, done)), this.files(report, !!r.redo), this.conflicts(conflicts, true), this.large(report), actions);
  }

  private files(report: RevertReport, redo: boolean): HTMLElement | null {
    if (report.files.length === 0) return null;
    const words = redo ? actionTextRedo : actionText;
    return h(
      "ul",
      { class: "revert-files", "aria-label": "Files" },
      ...report.files.map((f) => h("li", { class: `revert-file action-${f.action}` }, h("code", null, f.path), h("span", { class: "revert-action" }, ` ${words[f.action] ?? f.action}`))),
    );
  }

  private conflicts(conflicts: NonNullable<RevertReport["conflicts"]>, left: boolean): HTMLElement | null {
    if (conflicts.length === 0) return null;
    return h(
      "div",
      { class: "revert-conflicts", role: "group", "aria-label": "Conflicts" },
      h("div", { class: "revert-conflicts-head" }, icon("warning"), h("span", null, left ? "Left alone, changed since:" : "Changed since, left alone unless you choose otherwise:")),
      ...conflicts.map((c) =>
        h(
          "details",
          { class: "revert-conflict" },
          h("summary", null, h("code", null, c.path), h("span", { class: "revert-reason" }, ` ${c.reason}`)),
          c.diff ? h("pre", { class: "revert-conflict-diff" }, c.diff) : null,
        ),
      ),
    );
  }

  private large(report: RevertReport): HTMLElement | null {
    const nr = report.notRestorable ?? [];
    if (nr.length === 0) return null;
    return h(
      "div",
      { class: "revert-large" },
      "Not kept by the checkpoints (too large), left as they are: ",
      ...nr.map((f, i) => h("span", null, i ? ", " : "", h("code", null, f.path))),
    );
  }

  private show(...children: (HTMLElement | null)[]): void {
    this.card.hidden = false;
    this.bar.hidden = true;
    this.card.replaceChildren(...children.filter((c): c is HTMLElement => c !== null));
    this.card.scrollIntoView?.({ block: "nearest" });
  }

  private closeCard(): void {
    this.card.hidden = true;
    this.card.replaceChildren();
    this.bar.dataset.key = "";
    this.renderBar();
  }
}

function count(n: number): string {
  return n === 1 ? "1 file" : `${n} files`;
}

function turnsText(report: RevertReport): string {
  const n = Array.isArray(report.turns) ? report.turns.length : 1;
  return n > 1 ? `this turn and the ${n - 1} after it` : "this turn";
}
