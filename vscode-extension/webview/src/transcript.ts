// The transcript: what the stream shows, as data. Session updates are
// folded into entries — consecutive chunks of one kind into one message,
// every update of a tool call into its one entry, a turn's plans into one
// plan and its usage into one total — so a long turn stays small enough to
// keep in the webview's saved state and to render again after a reload.
import type { PlanEntry, SessionUpdate, ToolContent, ToolKind, ToolStatus, Location, TurnState } from "../../shared/protocol";
import { imageRefOf, type ImageRef } from "./images";

export type ToolCall = {
  toolCallId: string;
  title: string;
  kind: ToolKind;
  status: ToolStatus;
  locations?: Location[];
  rawInput?: unknown;
  content?: ToolContent[];
};

export type Usage = {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  cost: number;
  calls: number;
  contextUsed?: number;
  contextWindow?: number;
};

export type Entry = { id: number } & (
  | { kind: "user" | "agent" | "thought"; text: string; images?: ImageRef[] }
  | { kind: "tool"; call: ToolCall }
  | { kind: "plan"; entries: PlanEntry[] }
  | { kind: "usage"; usage: Usage }
  | { kind: "notice"; level: "info" | "warning" | "error"; message: string }
  | { kind: "failed"; message: string }
  | { kind: "cancelled" }
);

export type Saved = { entries: Entry[]; state: TurnState | "" };

const savedEntries = 200;

const chunkKinds = {
  user_message_chunk: "user",
  agent_message_chunk: "agent",
  agent_thought_chunk: "thought",
} as const;

export class Transcript {
  entries: Entry[] = [];
  state: TurnState | "" = "";
  private nextId = 1;
  private tools = new Map<string, Entry & { kind: "tool" }>();
  // The current turn's plan and usage, updated in place.
  private plan?: Entry & { kind: "plan" };
  private usage?: Entry & { kind: "usage" };

  constructor(saved?: Saved) {
    if (!saved) return;
    this.entries = saved.entries;
    this.state = saved.state;
    for (const e of this.entries) {
      this.nextId = Math.max(this.nextId, e.id + 1);
      if (e.kind === "tool") this.tools.set(e.call.toolCallId, e);
      if (e.kind === "user") this.plan = this.usage = undefined;
      if (e.kind === "plan") this.plan = e;
      if (e.kind === "usage") this.usage = e;
    }
  }

  // save returns what the webview keeps across being hidden: the last
  // savedEntries entries, without the tools' raw input (an edit's input
  // repeats its diff). It only has to paint the view until the host sends
  // the session's history again, so it stays small enough to write often.
  save(): Saved {
    const entries = this.entries.slice(-savedEntries).map((e) =>
      e.kind === "tool" && e.call.rawInput !== undefined ? { ...e, call: { ...e.call, rawInput: undefined } } : e,
    );
    return { entries, state: this.state };
  }

  get running(): boolean {
    return this.state === "running" || this.state === "requires_action";
  }

  // apply folds one update in and returns the entry it added or changed
  // (null when nothing shows, e.g. a state change).
  apply(u: SessionUpdate): Entry | null {
    switch (u.sessionUpdate) {
      case "user_message_chunk":
      case "agent_message_chunk":
      case "agent_thought_chunk": {
        const kind = chunkKinds[u.sessionUpdate];
        const image = kind === "user" ? imageRefOf(u.content) : null;
        if (image) return this.addImage(image);
        const text = u.content?.type === "text" && typeof u.content.text === "string" ? u.content.text : "";
        if (!text) return null;
        const last = this.entries[this.entries.length - 1];
        if (kind === "user" && last?.kind !== "user") this.beginTurn();
        if (last && last.kind === kind) {
          last.text += text;
          return last;
        }
        return this.add({ kind, text });
      }
      case "tool_call":
      case "tool_call_update": {
        if (typeof u.toolCallId !== "string" || !u.toolCallId) return null;
        // Updates carry the fields whole; keep what an update leaves out.
        const fields: Partial<ToolCall> = {};
        if (typeof u.title === "string") fields.title = u.title;
        if (typeof u.kind === "string") fields.kind = u.kind;
        if (typeof u.status === "string") fields.status = u.status;
        if (Array.isArray(u.locations)) fields.locations = u.locations.filter((l) => l && typeof l.uri === "string");
        if (u.rawInput !== undefined) fields.rawInput = u.rawInput;
        if (Array.isArray(u.content)) fields.content = u.content.filter((c) => c && typeof c === "object");
        const known = this.tools.get(u.toolCallId);
        if (known) {
          known.call = { ...known.call, ...fields };
          return known;
        }
        const call: ToolCall = { title: "", kind: "other", status: "pending", ...fields, toolCallId: u.toolCallId };
        const entry = this.add({ kind: "tool", call }) as Entry & { kind: "tool" };
        this.tools.set(u.toolCallId, entry);
        return entry;
      }
      case "plan": {
        const entries = Array.isArray(u.entries) ? u.entries.filter((p) => p && typeof p.content === "string") : [];
        if (this.plan) {
          this.plan.entries = entries;
          return this.plan;
        }
        const plan = this.add({ kind: "plan", entries }) as Entry & { kind: "plan" };
        this.plan = plan;
        return plan;
      }
      case "usage_update": {
        const entry =
          this.usage ??
          (this.add({
            kind: "usage",
            usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 0, calls: 0 },
          }) as Entry & { kind: "usage" });
        this.usage = entry;
        const t = entry.usage;
        t.inputTokens += num(u.inputTokens);
        t.outputTokens += num(u.outputTokens);
        t.cacheReadTokens += num(u.cacheReadTokens);
        t.cacheWriteTokens += num(u.cacheWriteTokens);
        t.cost += num(u.cost);
        t.calls++;
        if (typeof u.contextUsed === "number") t.contextUsed = u.contextUsed;
        if (typeof u.contextWindow === "number") t.contextWindow = u.contextWindow;
        return entry;
      }
      case "state_update": {
        const was = this.running;
        this.state = u.state;
        if (u.state === "running" && !was && this.entries[this.entries.length - 1]?.kind !== "user") {
          this.beginTurn();
        }
        if (u.state === "failed") {
          return this.add({ kind: "failed", message: u.error?.message ?? "the turn failed" });
        }
        if (u.state === "cancelled") return this.add({ kind: "cancelled" });
        return null;
      }
      case "notice":
        if (typeof u.message !== "string") return null;
        return this.add({ kind: "notice", level: u.level === "error" || u.level === "warning" ? u.level : "info", message: u.message });
      default:
        return null;
    }
  }

  // tool is the entry of a tool call, by its id.
  tool(toolCallId: string): (Entry & { kind: "tool" }) | undefined {
    return this.tools.get(toolCallId);
  }

  // lastUserText is what "Retry" sends again.
  lastUserText(): string | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i];
      if (e.kind === "user") return e.text;
    }
    return undefined;
  }

  // addImage adds an image to the user's message, which it begins when
  // the message has no text (an image alone is a prompt).
  private addImage(image: ImageRef): Entry {
    const last = this.entries[this.entries.length - 1];
    if (last?.kind === "user") {
      last.images = [...(last.images ?? []), image];
      return last;
    }
    this.beginTurn();
    return this.add({ kind: "user", text: "", images: [image] });
  }

  private beginTurn(): void {
    this.plan = undefined;
    this.usage = undefined;
  }

  private add(e: DistributiveOmit<Entry, "id">): Entry {
    const entry = { ...e, id: this.nextId++ } as Entry;
    this.entries.push(entry);
    return entry;
  }
}

function num(x: unknown): number {
  return typeof x === "number" && Number.isFinite(x) ? x : 0;
}

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;
