// The messages between the extension host and the chat webview.
//
// The host speaks LSP with `darman lsp` (docs/protocol.md); the webview never
// sees LSP. It gets darman's session updates as they come (their ACP shape is
// kept, so one renderer serves live turns and reloaded history) and posts
// back what the user did. Both bundles import this file; change it in one
// commit with both sides.

// ---- darman's own shapes (docs/protocol.md) ----

export type TextContent = { type: "text"; text: string };

// An image of a user's message. darman.session.load links to a stored one
// (uri darman-image:<session>/<key>; darman.session.image reads its bytes);
// an image block carries its bytes in base64.
export type ImageLinkContent = { type: "resource_link"; uri: string; name?: string; mimeType?: string; size?: number; text?: string };
export type ImageContent = { type: "image"; mimeType: string; data: string; uri?: string };

export type Location = {
  uri: string;
  range: {
    start: { line: number; character: number };
    end: { line: number; character: number };
  };
};

export type ToolKind =
  | "read"
  | "edit"
  | "delete"
  | "move"
  | "search"
  | "execute"
  | "think"
  | "fetch"
  | "other";

export type ToolStatus = "pending" | "in_progress" | "completed" | "failed";

export type ToolContent =
  | { type: "content"; content: TextContent }
  | { type: "diff"; uri: string; oldText: string; newText: string }
  | { type: "terminal"; output: string };

export type PlanEntry = {
  content: string;
  status: "pending" | "in_progress" | "completed";
  priority?: string;
};

export type TurnState =
  | "running"
  | "idle"
  | "requires_action"
  | "failed"
  | "cancelled";

// One darman/sessionUpdate `update`; `sessionUpdate` names the kind.
export type SessionUpdate =
  | { sessionUpdate: "user_message_chunk"; content: TextContent | ImageLinkContent | ImageContent }
  | { sessionUpdate: "agent_message_chunk"; content: TextContent }
  | { sessionUpdate: "agent_thought_chunk"; content: TextContent }
  | {
      sessionUpdate: "tool_call" | "tool_call_update";
      toolCallId: string;
      title: string;
      kind: ToolKind;
      status: ToolStatus;
      locations?: Location[];
      rawInput?: unknown;
      content?: ToolContent[];
    }
  | { sessionUpdate: "plan"; entries: PlanEntry[] }
  | {
      sessionUpdate: "usage_update";
      inputTokens?: number;
      outputTokens?: number;
      cacheReadTokens?: number;
      cacheWriteTokens?: number;
      cost?: number;
      contextUsed?: number;
      contextWindow?: number;
    }
  | {
      sessionUpdate: "state_update";
      state: TurnState;
      error?: { code: string; message: string };
    }
  | {
      sessionUpdate: "notice";
      level: "info" | "warning" | "error";
      message: string;
    }
  /** /new made a session: the panel switches to it (chat.ts; the webview never sees it). */
  | { sessionUpdate: "new_session"; newSessionId: string };

export type PermissionOptionId =
  | "allow_once"
  | "allow_always"
  | "reject_once"
  | "reject_always";

// The params of darman/requestPermission.
export type PermissionRequest = {
  sessionId: string;
  turnId: string;
  requestId: string;
  toolCall: {
    toolCallId: string;
    title: string;
    permission: string;
    subjects: string[];
    always?: string[];
    reasons?: string[];
    content?: ToolContent[];
  };
  options: { optionId: PermissionOptionId; name: string; kind: string }[];
};

export type SessionSummary = {
  sessionId: string;
  title: string;
  updatedAt: string;
  state: string;
  model: string;
};

export type ModelInfo = {
  id: string; // what darman.prompt's `model` takes, "provider/model"
  name?: string;
  contextWindow?: number;
};

// A named agent (initialize's experimental.darman.agents, darman/agentsChanged).
export type AgentInfo = { name: string; description?: string; mode?: string };

export type CommandInfo = { name: string; description?: string; argumentHint?: string };

// An image pasted or dropped on the prompt box: its bytes in base64.
export type PromptImage = { mimeType: string; data: string; name?: string };

// A file or selection the prompt carries; shown as a removable chip. The
// editor offers its file or selection (no kind); what the user picks after
// @ has a kind and goes to darman as a reference (docs/protocol.md).
export type ContextChip = {
  uri: string;
  label: string; // "main.go" or "main.go:12-30"
  range?: Location["range"];
  kind?: MentionKind;
};

export type MentionKind = "file" | "folder" | "symbol" | "selection" | "problems" | "terminal";

// One thing @ offers: a file, folder or symbol of the workspace, the
// editor's selection, the workspace's problems, or the last terminal
// command and its output.
export type Mention = { kind: MentionKind; label: string; detail?: string; uri: string; range?: Location["range"] };

// darman.turn.revert's and darman.turn.redo's answer (docs/protocol.md).
export type RevertReport = {
  action?: "revert" | "redo";
  sessionId: string;
  turnId: string; // the turn's user message id
  turn?: string; // the turnId darman.prompt answered, when there is one
  turns: string[];
  applied: boolean;
  files: { path: string; action: "restore" | "create" | "delete" }[];
  conflicts?: { path: string; reason: string; diff?: string }[];
  notRestorable?: { path: string; size: number; modified?: string }[];
  diff: string;
};

// ---- host → webview ----

export type HostMessage =
  // Sent once the server answered initialize, and again when anything in it changes.
  | {
      type: "ready";
      models: ModelInfo[];
      model: string; // the model new turns use
      commands: CommandInfo[];
      agents?: AgentInfo[]; // the agents the picker offers (primary ones)
    }
  // The server could not be started or died; `action` names a button the webview shows.
  | { type: "serverError"; message: string; action?: { label: string; command: string } }
  // The picker's sessions, newest first; more: older ones follow (moreSessions).
  | { type: "sessions"; sessions: SessionSummary[]; current?: string; more?: boolean }
  // The models the endpoints serve (darman.model.list), after ready's list.
  | { type: "models"; models: ModelInfo[] }
  // A session was opened or loaded: replace the stream with its history.
  // turns: where each turn of the history begins in updates (darman.session.load's), for their Revert.
  | { type: "session"; sessionId: string; title: string; model: string; state: string; updates: SessionUpdate[]; agent?: string; turns?: TurnStart[] }
  // A live darman/sessionUpdate for the current session.
  | { type: "update"; sessionId: string; turnId?: string; update: SessionUpdate }
  | { type: "permission"; request: PermissionRequest }
  // The question was answered elsewhere (another client, a timeout): drop its card.
  | { type: "permissionClosed"; requestId: string }
  // The active editor's selection or file, offered as context.
  | { type: "context"; chip: ContextChip | null }
  // Put this text in the prompt box (palette commands like "ask about selection").
  | { type: "fillPrompt"; text: string; send?: boolean }
  // What @ offers for the text after it (answering mentionQuery's id).
  | { type: "mentions"; id: number; items: Mention[] }
  // The commands / offers, listed afresh (answering listCommands).
  | { type: "commands"; commands: CommandInfo[] }
  // Put the caret in the prompt box (darman.focusChat).
  | { type: "focusPrompt" }
  | { type: "error"; message: string }
  // A revert or redo darman previewed or applied (`request` is what was asked).
  | { type: "revertReport"; request: RevertRequest; report: RevertReport }
  // darman refused it (a running turn, nothing to revert): its message.
  | { type: "revertFailed"; request: RevertRequest; message: string }
  // A code block was applied as an edit of the session's last turn (darman.turn.apply): turnId reverts it.
  | { type: "applied"; sessionId: string; turnId: string; uri: string; message: string }
  // The bytes of an image the webview asked for (fetchImage), or why not.
  | { type: "image"; uri: string; mimeType?: string; data?: string; error?: string };

// A turn of a loaded history: its id (darman.turn.revert's turnId), the index of its first update, and files: it changed files its Revert takes back (an applied code block has no tool call to say so).
export type TurnStart = { turnId: string; start: number; files?: boolean };

// A revert or redo of the panel's session: its turn (none: the last one), a
// preview or the real thing, over the user's conflicting changes or not.
export type RevertRequest = { sessionId: string; redo?: boolean; turnId?: string; preview: boolean; force?: boolean };

// ---- webview → host ----

export type WebviewMessage =
  | { type: "webviewReady" } // the webview has loaded and wants the current state
  | { type: "prompt"; text: string; context: ContextChip[]; model?: string; sessionId?: string; images?: PromptImage[]; agent?: string }
  // The plan → build hand-off ("Build it"): the server writes the prompt.
  | { type: "handoff"; sessionId: string }
  | { type: "cancel"; sessionId: string }
  | { type: "answerPermission"; requestId: string; optionId: PermissionOptionId; message?: string }
  | { type: "newSession" }
  | { type: "loadSession"; sessionId: string }
  | { type: "renameSession"; sessionId: string; title: string }
  | { type: "deleteSession"; sessionId: string }
  | { type: "listSessions" }
  | { type: "moreSessions" } // the next page of older sessions
  | { type: "setModel"; model: string }
  | { type: "openDiff"; uri: string; oldText: string; newText: string; title: string }
  | { type: "openLocation"; location: Location }
  | { type: "insertAtCursor"; text: string }
  // A code block applied to the file its fence names (file, relative to the
  // workspace), else over the active editor's selection: darman.turn.apply,
  // asked and recorded in the session's last turn.
  | { type: "applyToFile"; text: string; file?: string }
  | { type: "runInTerminal"; text: string } // a shell block's commands, typed into the terminal, not run

  | { type: "copy"; text: string }
  | { type: "removeContext"; uri: string }
  | { type: "mentionQuery"; id: number; query: string } // what @ offers for query (answered with mentions)
  | { type: "listCommands" } // "/" was typed: list the commands again, a file written since included (answered with commands)
  | { type: "runCommand"; command: string } // a VS Code command id, e.g. from serverError's action
  | ({ type: "revert" } & RevertRequest) // darman.turn.revert, or darman.turn.redo with redo
  | { type: "openPatch"; text: string; title: string } // a combined diff, opened as a document
  | { type: "fetchImage"; uri: string }; // a stored image's bytes (darman.session.image), answered with `image`
