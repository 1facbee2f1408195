// Package checkpoint lets a turn's changes to the workspace be taken back,
// all of them, whatever made them: the edit tools, a shell command, a
// generator the model ran.
//
// Before each step of a turn that may change files (a tool that is not
// read-only), the session calls Keeper.Step, which snapshots the workspace
// into a shadow git repository under darman's data directory
// (<data>/checkpoints/<hash of the workspace path>): the workspace's tracked
// and untracked-but-not-ignored files (its .gitignore and info/exclude
// honoured), as a tree. The real git binary does the work with GIT_DIR,
// GIT_INDEX_FILE and GIT_WORK_TREE pointing at the shadow and the
// workspace, neither the system nor the global configuration read, and
// hooks, fsmonitor and automatic gc off, so the user's .git — refs, index,
// stash, config — is never written; its object database is only read
// (as the shadow's alternate), so files already committed are not stored
// twice. The stat cache is darman's own (walk.go, statcache.go): a
// snapshot lists the directories (those whose own stat changed since their
// last listing: a new, deleted or renamed name changes it) and lstats the
// recorded files in parallel,
// each relative to its directory's descriptor, against what the last
// snapshot saw (size, times, inode, mode), and hands git only what changed:
// the new contents, stored as they are by one git hash-object for all
// (--no-filters: a revert writes back the bytes). The names it has not
// seen before are classified in the process by git's ignore rules
// (ignore.go: the workspace's .gitignore files, info/exclude and git's
// global exclude file; git check-ignore itself where the shadow's
// configuration could change the answer). What it leaves out (an ignored directory, a file over the
// limit) is remembered and not asked about again until a .gitignore on the
// way to it, or an exclude file, changes. The trees of the directories that
// changed are written as loose objects by darman; nothing changed, no git
// process runs at all. A file whose times lie within two seconds of the
// snapshot that read it is read again by the next one, so a change made in
// the same tick of the file system's clock, to the same size, is not
// missed. Recorded files stay recorded while they exist, as git's tracked
// files do, when a .gitignore comes to match them. A file over
// Options.MaxFileBytes (or unreadable) is left out and named in the
// snapshot as not restorable; a repository of its own inside the workspace
// is left out, and so is the checkpoint store when it lies inside.
//
// Where the system has a file watcher (inotify on Linux: watch.go), a
// snapshot does not walk the tree: each directory the walk goes into gets
// a watch before it is listed (never an ignored one), and the next
// snapshot reads the queued events and visits only the directories they
// name, walking whole only those new since. The walk stays for the first
// snapshot of a process, after another process took one, after the
// exclude files changed, after the queue overflowed, and for good once
// the watcher failed (Keeper.Status, darman doctor say why).
//
// The turn's first snapshot is its Before, stored with the session at once
// (agent.Checkpoint, through Store); End adds After when the turn ends.
//
// # Revert and redo
//
// Revert of a turn restores, to what they were in its Before, the files
// that turn and every later turn not already reverted changed (so reverting
// an earlier turn rewinds the workspace to that point, as a user expects of
// undo). A file whose content now — the editor's unsaved buffer counts —
// is not what the last of those turns left is a conflict: it is reported
// with the diff from what it holds to what would be restored and left
// alone, unless Force. Files are written through the given tool.Workspace
// (the editor's, so a buffer's undo still works and unsaved work is never
// clobbered), links, binary content and modes on the disk. A preview
// reports the same without writing. Edits the user made between the
// reverted turns to files those turns changed are taken back with them;
// the preview shows it.
//
// A revert records an Undo on its turn: a snapshot taken just before it
// and the files it wrote. Redo puts those files back to that snapshot,
// with the same conflict rule (a file changed since the revert is left
// alone). Reverts stack: redo takes back the latest first.
//
// # Space
//
// Removing a session removes its checkpoints with it; Collect then lets
// git pack the shadow and prune what no stored checkpoint reaches. After
// each turn the shadow's size is checked against Options.MaxBytes; past
// it, the oldest turns' snapshots are dropped (marked Dropped, logged, and
// named when someone tries to revert them) until it fits.
package checkpoint
