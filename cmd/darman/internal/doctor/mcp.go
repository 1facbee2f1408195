package doctor

import (
	"fmt"
	"strings"

	"github.com/darman-dev/darman/mcp/client"
)

// MCPServers reports each configured MCP server's state (once started
// and waited for), protocol version and tool count in doctor's "mcp
// servers" section.
func MCPServers(r *Report, statuses []client.Status) {
	for _, s := range statuses {
		kind := "optional"
		if s.Required {
			kind = "required"
		}
		if s.ConfigFile != "" {
			kind += ", from " + s.ConfigFile
		}
		if len(s.Visible) > 0 {
			kind += ", agents " + strings.Join(s.Visible, " ")
		}
		switch s.State {
		case client.StateReady:
			r.Add("mcp servers", s.Name, "ok", fmt.Sprintf("%s, %s, protocol %s, %d tools", s.Origin, kind, s.Protocol, s.Tools))
		case client.StateDisabled:
			r.Add("mcp servers", s.Name, "missing", "disabled in config ("+kind+")")
		default:
			status, detail := "warn", string(s.State)
			if s.Failure != nil {
				detail = fmt.Sprintf("%s: %s", s.Failure.Class, s.Failure.Message)
				if s.Required {
					status = "fail"
				}
			}
			r.Add("mcp servers", s.Name, status, s.Origin+", "+kind+": "+detail)
		}
		for _, refused := range s.Refused {
			r.Add("mcp servers", s.Name, "warn", refused)
		}
	}
}
