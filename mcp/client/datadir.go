package client

import "path/filepath"

// Layout is where the client keeps what outlives one darman process: the
// protocol cache (Options.ProtocolCache), the images tools return
// (Options.FilesDir) and the servers each session ran with
// (Options.Sessions). DataLayout puts them under darman's data directory;
// the zero Layout keeps nothing.
type Layout struct {
	ProtocolCache string
	FilesDir      string
	Sessions      SessionRecord
}

// DataLayout is the layout under darman's data directory dir:
// dir/mcp/protocols.json, dir/mcp/files/<session>/ and
// dir/mcp/sessions/<session>.json. An empty dir keeps nothing.
func DataLayout(dir string) Layout {
	if dir == "" {
		return Layout{}
	}
	mcp := filepath.Join(dir, "mcp")
	return Layout{
		ProtocolCache: filepath.Join(mcp, "protocols.json"),
		FilesDir:      filepath.Join(mcp, "files"),
		Sessions:      SessionRecord{Dir: filepath.Join(mcp, "sessions")},
	}
}

// ForgetSession removes what l keeps of a deleted session: the identities
// of the servers it ran with and the images its tool calls returned.
func (l Layout) ForgetSession(session string) error {
	return ForgetSession(l.Sessions, l.FilesDir, session)
}
