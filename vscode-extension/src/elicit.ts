// darman/elicit: an MCP server's question to the user (docs/protocol.md),
// answered with VS Code's own prompts in the extension host. A form is a
// modal that says who asks, then one prompt per field: a quick pick for
// choices and yes/no, an input box (checked as the user types) for text
// and numbers. A URL is opened only after the user chose Open, and only an
// http(s) one. Escape, or darman withdrawing the request, is "cancel".

import * as vscode from "vscode";

/** One field of a form, as darman sends it. */
export interface ElicitField {
  name: string;
  title?: string;
  description?: string;
  type: "string" | "number" | "integer" | "boolean" | "array" | string;
  required: boolean;
  enum?: string[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  format?: string;
}

/** darman/elicit's params. */
export interface ElicitRequest {
  requestId: string;
  server: string;
  mode: "form" | "url";
  message: string;
  fields?: ElicitField[];
  url?: string;
}

/** darman/elicit's answer. */
export interface ElicitResult {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, unknown>;
}

const cancel: ElicitResult = { action: "cancel" };
const decline: ElicitResult = { action: "decline" };
const skip = "Skip";

/** answerElicit asks the user and returns their answer for darman. */
export async function answerElicit(req: ElicitRequest, token?: vscode.CancellationToken): Promise<ElicitResult> {
  const answer = req.mode === "url" ? await askURL(req) : await askForm(req, token);
  return token?.isCancellationRequested ? cancel : answer;
}

async function askURL(req: ElicitRequest): Promise<ElicitResult> {
  const url = req.url ?? "";
  if (!/^https?:\/\//i.test(url)) {
    void vscode.window.showWarningMessage(`darman declined the MCP server ${req.server}'s request to open ${JSON.stringify(url)}: only http and https addresses are opened.`);
    return decline;
  }
  const detail = req.message ? `${req.message}\n\n${url}` : url;
  const choice = await vscode.window.showInformationMessage(`The MCP server ${req.server} asks you to open a page.`, { modal: true, detail }, "Open", "Decline");
  if (choice === undefined) {
    return cancel;
  }
  if (choice !== "Open") {
    return decline;
  }
  if (!(await vscode.env.openExternal(vscode.Uri.parse(url)))) {
    void vscode.window.showWarningMessage(`VS Code could not open ${url}; open it yourself to continue with ${req.server}.`);
  }
  return { action: "accept" };
}

async function askForm(req: ElicitRequest, token?: vscode.CancellationToken): Promise<ElicitResult> {
  const fields = req.fields ?? [];
  const choice = await vscode.window.showInformationMessage(
    `The MCP server ${req.server} asks: ${req.message}`,
    { modal: true, detail: fields.length ? `It wants: ${fields.map(label).join(", ")}.` : undefined },
    "Answer",
    "Decline",
  );
  if (choice === undefined) {
    return cancel;
  }
  if (choice !== "Answer") {
    return decline;
  }
  const content: Record<string, unknown> = {};
  const title = `${req.server}: ${req.message}`;
  for (const f of fields) {
    if (token?.isCancellationRequested) {
      return cancel;
    }
    const value = isChoice(f) ? await pick(f, title, token) : await input(f, title, token);
    if (value === undefined) {
      return cancel;
    }
    if (value !== skipped) {
      content[f.name] = value;
    }
  }
  return { action: "accept", content };
}

function label(f: ElicitField): string {
  return f.title || f.name;
}

function isChoice(f: ElicitField): boolean {
  return f.type === "boolean" || f.type === "array" || (f.enum?.length ?? 0) > 0;
}

/** skipped is an optional field the user left empty. */
const skipped = Symbol("skipped");

interface Item extends vscode.QuickPickItem {
  value: unknown;
}

function placeHolder(f: ElicitField): string {
  const what = f.description ? `${label(f)}: ${f.description}` : label(f);
  return f.required ? what : `${what} (optional)`;
}

async function pick(f: ElicitField, title: string, token?: vscode.CancellationToken): Promise<unknown> {
  const items: Item[] =
    f.type === "boolean"
      ? [
          { label: "Yes", value: true },
          { label: "No", value: false },
        ]
      : (f.enum ?? []).map((e) => ({ label: e, value: f.type === "number" || f.type === "integer" ? Number(e) : e }));
  for (const it of items) {
    if (f.type === "array" ? Array.isArray(f.default) && f.default.includes(it.value) : it.value === f.default) {
      it.description = "default";
      it.picked = true;
    }
  }
  if (f.type === "array") {
    const chosen = await vscode.window.showQuickPick(items, { title, placeHolder: placeHolder(f), canPickMany: true, ignoreFocusOut: true }, token);
    return chosen?.map((it) => it.value);
  }
  if (!f.required) {
    items.push({ label: skip, description: "leave it empty", value: skipped });
  }
  items.sort((a, b) => Number(b.picked ?? false) - Number(a.picked ?? false));
  const chosen = await vscode.window.showQuickPick(items, { title, placeHolder: placeHolder(f), ignoreFocusOut: true }, token);
  return chosen?.value;
}

async function input(f: ElicitField, title: string, token?: vscode.CancellationToken): Promise<unknown> {
  const numeric = f.type === "number" || f.type === "integer";
  const typed = await vscode.window.showInputBox(
    {
      title,
      prompt: placeHolder(f),
      value: f.default === undefined || f.default === null ? undefined : String(f.default),
      password: false,
      ignoreFocusOut: true,
      validateInput: (text) => validate(f, text),
    },
    token,
  );
  if (typed === undefined) {
    return undefined;
  }
  if (typed.trim() === "" && !f.required) {
    return skipped;
  }
  return numeric ? Number(typed.trim()) : typed;
}

/**
 * validate returns why text does not fit the field, or undefined when it
 * does: what VS Code shows under the input box while the user types.
 */
export function validate(f: ElicitField, text: string): string | undefined {
  const t = text.trim();
  if (t === "") {
    return f.required ? `${label(f)} is required.` : undefined;
  }
  if (f.type === "number" || f.type === "integer") {
    const n = Number(t);
    if (!Number.isFinite(n)) {
      return `${label(f)} must be a number.`;
    }
    if (f.type === "integer" && !Number.isInteger(n)) {
      return `${label(f)} must be a whole number.`;
    }
    if (f.minimum !== undefined && n < f.minimum) {
      return `${label(f)} must be at least ${f.minimum}.`;
    }
    if (f.maximum !== undefined && n > f.maximum) {
      return `${label(f)} must be at most ${f.maximum}.`;
    }
    return undefined;
  }
  switch (f.format) {
    case "email":
      return /^[^@\s]+@[^@\s]+$/.test(t) ? undefined : `${label(f)} must be an email address.`;
    case "uri":
      return /^[a-z][\w+.-]*:\S+$/i.test(t) ? undefined : `${label(f)} must be a URI (https://…).`;
    case "date":
      return /^\d{4}-\d{2}-\d{2}$/.test(t) ? undefined : `${label(f)} must be a date (YYYY-MM-DD).`;
  }
  return undefined;
}
