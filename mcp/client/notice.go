package client

import "fmt"

// Notice words a binding's new state as a notice for the editor: the
// level ("info", "warning", "error") and one line naming the server.
func (s Status) Notice() (level, text string) {
	switch s.State {
	case StateReady:
		return "info", fmt.Sprintf("mcp server %s is ready: protocol %s, %d tools (catalog %d)", s.Name, s.Protocol, s.Tools, s.Generation)
	case StateStarting:
		return "info", fmt.Sprintf("mcp server %s is starting", s.Name)
	case StateRetiring:
		return "info", fmt.Sprintf("mcp server %s is retiring: it finishes the calls in flight, then stops", s.Name)
	case StateFailed:
		level = "warning"
		if s.Required {
			level = "error"
		}
		if s.Failure != nil {
			return level, fmt.Sprintf("mcp server %s failed: %s: %s", s.Name, s.Failure.Class, s.Failure.Message)
		}
		return level, fmt.Sprintf("mcp server %s failed", s.Name)
	}
	return "info", fmt.Sprintf("mcp server %s is %s", s.Name, s.State)
}
