package diagnostics_test

import (
	"testing"
	"time"

	"github.com/darman-dev/darman/diagnostics"
)

func TestNoticeWording(t *testing.T) {
	root := "/w"
	for _, tc := range []struct {
		st          diagnostics.ServerStatus
		level, text string
	}{
		{diagnostics.ServerStatus{Name: "go", Root: "/w", State: diagnostics.StateRunning, Server: "gopls v0.23.0", PID: 42},
			"info", "language server go is running: gopls v0.23.0, pid 42"},
		{diagnostics.ServerStatus{Name: "python", Root: "/w/svc", State: diagnostics.StateRunning, Command: []string{"/bin/pyright-langserver", "--stdio"}, PID: 7},
			"info", "language server python (svc) is running: pyright-langserver, pid 7"},
		{diagnostics.ServerStatus{Name: "rust", Root: "/w", State: diagnostics.StateFailed, Extensions: []string{".rs"}, Reason: "initialize: closed; the process exited with status 1"},
			"warning", "language server rust failed to start, so .rs files get no diagnostics: initialize: closed; the process exited with status 1"},
		{diagnostics.ServerStatus{Name: "c", Root: "/w", State: diagnostics.StateCrashed, Reason: "the process was killed by killed"},
			"warning", "language server c crashed; it restarts when next needed: the process was killed by killed"},
		{diagnostics.ServerStatus{Name: "python", Root: "/w", State: diagnostics.StateMissing, Extensions: []string{".py", ".pyi"}, Reason: "the language server is not installed: pyright-langserver was not found on PATH (npm install pyright)"},
			"info", "language server python is not installed, so .py .pyi files get no diagnostics: pyright-langserver was not found on PATH (npm install pyright)"},
		{diagnostics.ServerStatus{Name: "go", Root: "/w", State: diagnostics.StateIdle},
			"info", "language server go was stopped after it went unused; it starts again when needed"},
		{diagnostics.ServerStatus{Name: "go", Root: "/w", State: diagnostics.StateRunning, Extensions: []string{".go"}, Load: diagnostics.LoadFailed, LoadError: &diagnostics.LoadError{
			Program: "gopls", Cause: "gopls cannot find the `go` command", Advice: "put Go on PATH for darman's environment", Said: "Error loading workspace folders", RetryAt: time.Now().Add(time.Second)}},
			"warning", "language server go runs but cannot load the workspace, so .go files get no diagnostics and queries fail: gopls cannot find the `go` command: put Go on PATH for darman's environment (gopls said: \"Error loading workspace folders\")"},
		{diagnostics.ServerStatus{Name: "go", Root: "/w", State: diagnostics.StateRunning, Extensions: []string{".go"}, Load: diagnostics.LoadLoaded},
			"info", "language server go loaded the workspace: .go files get diagnostics again"},
	} {
		if level, text := tc.st.Notice(root); level != tc.level || text != tc.text {
			t.Errorf("Notice(%s) = %s %q; want %s %q", tc.st.State, level, text, tc.level, tc.text)
		}
	}
}
