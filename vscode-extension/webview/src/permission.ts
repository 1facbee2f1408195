// Permission cards: darman asks before a tool does something its rules do
// not allow yet. Each card says what is asked (the permission, the commands
// or files, why, the diff of an edit) and what "always" would grant, and
// takes the answer by click or keyboard: focus moves to the card when it
// arrives, Tab walks its buttons, Escape rejects.
import type { PermissionOptionId, PermissionRequest, WebviewMessage } from "../../shared/protocol";
import { button, h } from "./dom";
import { icon } from "./icons";
import { diffSummary } from "./toolcard";

type Post = (m: WebviewMessage) => void;

let nextId = 1;

export class Permissions {
  readonly el: HTMLElement;
  private cards = new Map<string, { request: PermissionRequest; el: HTMLElement }>();

  constructor(
    private post: Post,
    private changed: () => void,
    private afterAnswer: () => void,
  ) {
    this.el = h("div", { class: "permissions" });
  }

  requests(): PermissionRequest[] {
    return Array.from(this.cards.values(), (c) => c.request);
  }

  clear(): void {
    this.cards.clear();
    this.el.replaceChildren();
  }

  add(request: PermissionRequest, focus = true): void {
    if (!request?.requestId || this.cards.has(request.requestId)) return;
    const el = this.card(request);
    this.cards.set(request.requestId, { request, el });
    this.el.append(el);
    if (focus) {
      el.focus();
      el.scrollIntoView({ block: "nearest" });
    }
    this.changed();
  }

  /** reveal scrolls to the oldest open question and puts focus on it. */
  reveal(): void {
    const first = this.el.querySelector<HTMLElement>(".permission");
    if (!first) return;
    first.scrollIntoView({ block: "nearest" });
    first.focus();
  }

  close(requestId: string): void {
    const card = this.cards.get(requestId);
    if (!card) return;
    const hadFocus = card.el.contains(document.activeElement);
    card.el.remove();
    this.cards.delete(requestId);
    this.changed();
    if (hadFocus) this.focusNext();
  }

  private answer(request: PermissionRequest, optionId: PermissionOptionId, message?: string): void {
    const m: WebviewMessage = { type: "answerPermission", requestId: request.requestId, optionId };
    if (message) m.message = message;
    this.post(m);
    this.close(request.requestId);
  }

  private focusNext(): void {
    const next = this.el.querySelector<HTMLElement>(".permission");
    if (next) next.focus();
    else this.afterAnswer();
  }

  private card(r: PermissionRequest): HTMLElement {
    const id = nextId++;
    const tc = r.toolCall ?? { toolCallId: "", title: "", permission: "", subjects: [] };
    const options = r.options?.length
      ? r.options
      : ([
          { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
          { optionId: "reject_once", name: "Reject", kind: "reject_once" },
        ] as PermissionRequest["options"]);
    const has = (o: PermissionOptionId) => options.some((x) => x.optionId === o);
    const rejectId: PermissionOptionId = has("reject_once") ? "reject_once" : "reject_always";

    const title = h("div", { class: "perm-title", id: `perm-title-${id}` }, icon("warning"), h("span", null, `darman asks: ${tc.title || tc.permission}`));
    const details = h("div", { class: "perm-details", id: `perm-desc-${id}` });
    if (tc.permission) details.append(h("div", null, "Permission: ", h("code", null, tc.permission)));
    if (tc.subjects?.length) {
      details.append(h("ul", { class: "perm-subjects", "aria-label": "What it applies to" }, ...tc.subjects.map((s) => h("li", null, h("code", null, s)))));
    }
    if (tc.reasons?.length) {
      details.append(h("ul", { class: "perm-reasons", "aria-label": "Why darman asks" }, ...tc.reasons.map((s) => h("li", null, s))));
    }
    for (const c of tc.content ?? []) {
      if (c.type === "diff") details.append(diffSummary(c, tc.title, this.post));
      else if (c.type === "content" && c.content?.text) details.append(h("pre", { class: "tool-output" }, c.content.text));
    }

    const actions = h("div", { class: "perm-actions" });
    const messageBox = h("textarea", { class: "perm-message-input", rows: 2, "aria-label": "Why you reject (sent to the model)", placeholder: "Tell the model why, or what to do instead" });
    const messageForm = h(
      "div",
      { class: "perm-message", hidden: true },
      messageBox,
      button("Send rejection", { class: "secondary" }, () => this.answer(r, rejectId, messageBox.value.trim())),
    );
    for (const o of options) {
      const primary = o.optionId === "allow_once";
      const b = button(o.name || o.optionId, { class: primary ? "primary" : "secondary", "data-option": o.optionId }, () => this.answer(r, o.optionId));
      if (o.optionId === "allow_always" || o.optionId === "reject_always") {
        const grants = tc.always?.length ? tc.always : tc.subjects ?? [];
        const note = h(
          "div",
          { class: "perm-always", id: `perm-${o.optionId}-${id}` },
          o.optionId === "allow_always" ? "Always allows: " : "Always rejects: ",
          ...grants.flatMap((g, i) => [i ? ", " : "", h("code", null, g)]),
          grants.length ? "" : `every ${tc.permission} request`,
        );
        b.setAttribute("aria-describedby", note.id);
        actions.append(h("div", { class: "perm-option" }, b, note));
      } else {
        actions.append(b);
      }
    }
    const withMessage = button("Reject with message…", { class: "secondary", "aria-expanded": "false" }, () => {
      messageForm.hidden = false;
      withMessage.setAttribute("aria-expanded", "true");
      messageBox.focus();
    });
    actions.append(withMessage);

    const card = h(
      "section",
      { class: "permission", role: "group", tabindex: -1, "aria-labelledby": title.id, "aria-describedby": details.id, "data-request": r.requestId },
      title,
      details,
      actions,
      messageForm,
      h("div", { class: "perm-keys" }, "Tab to choose · Esc rejects"),
    );
    card.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") {
        ev.preventDefault();
        ev.stopPropagation();
        if (ev.target === messageBox) {
          messageForm.hidden = true;
          withMessage.setAttribute("aria-expanded", "false");
          withMessage.focus();
          return;
        }
        this.answer(r, rejectId);
      } else if (ev.key === "Enter" && ev.target === messageBox && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        this.answer(r, rejectId, messageBox.value.trim());
      }
    });
    return card;
  }
}
