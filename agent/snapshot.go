package agent

import "time"

// Checkpoint is what darman recorded of the workspace around one turn, so
// that what the turn did to the files can be undone (agent/checkpoint): a
// snapshot before its first step that could change files, and one when it
// ended. The store keeps it with the session and removes it with it.
type Checkpoint struct {
	SessionID ID `json:"sessionId"`
	// MessageID is the turn's user message: it names the turn.
	MessageID ID `json:"messageId"`
	// Turn is the front's own name of the turn (darman lsp's turnId); ""
	// when the front gave none.
	Turn      string `json:"turn,omitempty"`
	Workspace string `json:"workspace"`
	// Before is the workspace before the turn's first step that could
	// change files; After is it when the turn ended (zero while the turn
	// runs, or when its process died before the end).
	Before Snapshot `json:"before"`
	After  Snapshot `json:"after,omitzero"`
	// Steps counts the snapshots taken in the turn, Before included.
	Steps   int       `json:"steps"`
	Created time.Time `json:"created"`
	Ended   time.Time `json:"ended,omitzero"`
	// Reverted is when the turn's changes were undone (with those of the
	// turns after it); zero while they are in place.
	Reverted time.Time `json:"reverted,omitzero"`
	// Undo is set on the first turn of a revert: what redo needs.
	Undo *Undo `json:"undo,omitempty"`
	// Dropped is when the turn's snapshots were let go to keep the
	// checkpoint store under its size limit; the turn cannot be reverted
	// from then on.
	Dropped time.Time `json:"dropped,omitzero"`
}

// Snapshot is the workspace's files at one moment: a tree in the shadow
// git store, and the files too large to be kept in it.
type Snapshot struct {
	Tree  string      `json:"tree"`
	Large []LargeFile `json:"large,omitempty"`
}

// LargeFile is a file a snapshot names but does not hold (over the size
// limit, or unreadable): it cannot be restored.
type LargeFile struct {
	Path     string    `json:"path"` // slash-separated, relative to the workspace
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified"`
}

// Undo is what a revert changed, for redo to put back.
type Undo struct {
	At time.Time `json:"at"`
	// Redo is the workspace just before the revert.
	Redo Snapshot `json:"redo"`
	// Turns are the turns reverted together (their MessageIDs), this
	// one first.
	Turns []ID `json:"turns"`
	// Files are the files the revert wrote or removed (slash-separated,
	// relative to the workspace).
	Files []string `json:"files"`
	// Left are the files it left alone as conflicts: a forced revert of
	// the same turn restores them too.
	Left []string `json:"left,omitempty"`
}

// TurnRef names a running turn for the checkpoints taken in it.
type TurnRef struct {
	SessionID ID
	// MessageID is the turn's user message.
	MessageID ID
	// Turn is the front's name of the turn; "" when it has none.
	Turn      string
	Workspace string
}
