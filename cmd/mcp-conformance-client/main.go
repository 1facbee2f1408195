// Command mcp-conformance-client is darman's MCP client (mcp/client, the
// code darman runs) driven by the MCP conformance suite: the suite starts
// a test server per scenario, runs this program with the server's URL as
// its last argument and the scenario in MCP_CONFORMANCE_SCENARIO, and
// checks what the client did.
//
//	conformance client --command mcp-conformance-client --scenario tools_call
//
// Each scenario connects through a client.Manager, as darman does, and
// does what the scenario's server expects of a client. It exits 1 with a
// message on stderr when the scenario could not be played.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/mcp/client"
)

func main() {
	if err := run(os.Args[1:], os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-conformance-client:", err)
		os.Exit(1)
	}
}

// scenarios maps a scenario to the tool calls it needs, by the server's
// tool name; initialize needs none.
var scenarios = map[string]map[string]string{
	"initialize":                          {},
	"tools_call":                          {"add_numbers": `{"a": 5, "b": 3}`},
	"elicitation-sep1034-client-defaults": {"test_client_elicitation_defaults": `{}`},
	"sse-retry":                           {"test_reconnection": `{}`},
}

// acceptDefaults accepts every elicitation without values of its own, so
// the schema's defaults are what the server receives.
type acceptDefaults struct{}

func (acceptDefaults) Elicit(context.Context, client.Elicitation) (client.ElicitAnswer, error) {
	return client.ElicitAnswer{Action: "accept", Content: map[string]any{}}, nil
}

func run(args []string, scenario string, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: mcp-conformance-client <server-url> (the suite appends it), with MCP_CONFORMANCE_SCENARIO set")
	}
	calls, ok := scenarios[scenario]
	if !ok {
		return fmt.Errorf("scenario %q is not supported (supported: initialize, tools_call, elicitation-sep1034-client-defaults, sse-retry; darman's client does no OAuth)", scenario)
	}
	url := args[len(args)-1]
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := client.New([]client.Definition{{Name: "conformance", URL: url, Required: true, StartupTimeout: 20 * time.Second, CallTimeout: 20 * time.Second}},
		client.Options{Logger: log, Gate: acceptDefaults{}, Version: "conformance"})
	defer m.Close()
	ctx := context.Background()
	tools, err := m.Tools(ctx)
	if err != nil {
		return err
	}
	for raw, input := range calls {
		name := client.ModelName("conformance", raw)
		var found tool.Tool
		for _, t := range tools {
			if t.Info().Name == name {
				found = t
			}
		}
		if found == nil {
			return fmt.Errorf("the server offers no tool %s", raw)
		}
		res, err := found.Run(ctx, &tool.Env{}, json.RawMessage(input))
		if err != nil {
			return fmt.Errorf("%s: %w", raw, err)
		}
		fmt.Fprintf(stderr, "%s: %s\n", raw, res.Output)
		if res.IsError {
			return fmt.Errorf("%s failed: %s", raw, res.Output)
		}
	}
	return nil
}
