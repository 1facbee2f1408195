// Package store keeps darman's sessions, messages, parts and per-workspace
// permission grants in one badger database under the data directory.
//
// # Several processes, one database
//
// Badger lets one process at a time open a directory, yet two editor
// windows, `darman run` and `darman sessions list` all want the same
// sessions. So the first process to open the data directory becomes its
// owner: it takes an exclusive lock on DIR/owner.lock, opens badger and
// serves every other darman process over a Unix socket (DIR/owner.sock, or a
// hashed name in the temp directory when that path is too long for a
// socket; on Windows TCP loopback with a token in DIR\owner.addr, since
// Wine has no AF_UNIX and no working overlapped named pipes: see
// owner_windows.go). The others open as clients and send each call to the
// owner. When the owner exits — cleanly or by crash, since the kernel drops the lock with
// the process — a client whose call fails on the broken connection runs the
// same race again: one of them takes the lock and becomes the new owner, the
// rest connect to it, and the failed call is sent again. Every write is a
// put or delete by key chosen by the writer (IDs are made by the caller), so
// sending a call twice is harmless.
//
// # Durability
//
// Writes go to badger's write-ahead log before a call returns. The log is
// memory-mapped, so an acknowledged write survives the process being killed
// (the operating system still holds the page); it is flushed to the disk
// within seconds, so a power loss may lose the last of them.
//
// A part that grows as it streams is written once, then appended to
// (AppendPart), then put whole when it ends, which replaces the appends:
// its bytes grow with its length, not with the square of it. Readers see
// one part with the appends joined.
//
// # Damage
//
// Badger crashes, in goroutines of its own, on a table file shorter than
// its footer says. Open checks every table's footer first and returns a
// DamageError instead; Repair moves a damaged database aside and keeps
// what can be read.
//
// # Keys
//
//	meta/schema                         schema version
//	s/<sessionID>                       agent.Session
//	m/<sessionID>/<messageID>           agent.Message
//	p/<sessionID>/<messageID>/<partID>  agent.Part
//	p/<sessionID>/<messageID>/<partID>/<seq>  text appended to it (raw)
//	g/<workspace>\x00<perm>\x00<pattern> Grant
//
// IDs are ULIDs behind a kind prefix, so every prefix scan runs in creation
// order. Values are JSON, readable after upgrades; the schema version says
// which migrations have run.
package store
