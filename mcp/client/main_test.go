package client_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// TestMain doubles as a tiny MCP server with faults on demand, so the
// tests run real processes: DARMAN_FAKE_MCP names the behaviour. As the
// tests, it fails them if a goroutine outlives them: a closed binding has
// stopped its sessions, restarts and watchers.
func TestMain(m *testing.M) {
	if mode := os.Getenv("DARMAN_FAKE_MCP"); mode != "" {
		fakeServer(mode)
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

type echoIn struct {
	Text string `json:"text"`
}

type echoInV2 struct {
	Text  string `json:"text"`
	Times int    `json:"times,omitempty"`
}

// fakeMark appends a line to the file DARMAN_FAKE_MARK names, for tests
// that count what the server saw.
func fakeMark(line string) {
	if mark := os.Getenv("DARMAN_FAKE_MARK"); mark != "" {
		if f, err := os.OpenFile(mark, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			fmt.Fprintln(f, line)
			f.Close()
		}
	}
}

func fakeServer(mode string) {
	fakeMark("start") // one line per spawn
	switch mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: no config")
		os.Exit(3)
	case "hang":
		io.Copy(io.Discard, os.Stdin)
		return
	case "garbage":
		go io.Copy(io.Discard, os.Stdin)
		for range 100 {
			fmt.Println("this is not json {{{")
			time.Sleep(10 * time.Millisecond)
		}
		return
	case "flood":
		go func() {
			line := strings.Repeat("x", 4000)
			for {
				if _, err := fmt.Fprintln(os.Stderr, line); err != nil {
					return
				}
			}
		}()
	}
	var in io.Reader = os.Stdin
	if mode == "probe-exit" {
		// Like go-sdk #1177's servers: die on anything but initialize.
		r := bufio.NewReader(os.Stdin)
		first, _ := r.ReadBytes('\n')
		if bytes.Contains(first, []byte("server/discover")) {
			os.Exit(1)
		}
		in = io.MultiReader(bytes.NewReader(first), r)
	}
	newFake().Run(context.Background(), &mcp.IOTransport{Reader: io.NopCloser(in), Writer: os.Stdout})
}

// newFake is the fake server's tools, for stdio (fakeServer) and for the
// HTTP transports (served in-process by the tests).
func newFake() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
	if os.Getenv("DARMAN_FAKE_SCHEMA") == "v2" {
		// The same tool, its schema changed: for drift reports.
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoInV2) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}, &mcp.TextContent{Text: "done"}}}, nil, nil
		})
	} else {
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}, &mcp.TextContent{Text: "done"}}}, nil, nil
		})
	}
	s.AddTool(&mcp.Tool{Name: "crash", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Exit(7)
		return nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "hang", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// The client's notifications/cancelled ends ctx; say so for tests
		// that check it was sent.
		fakeMark("hanging")
		<-ctx.Done()
		fakeMark("cancelled")
		return nil, ctx.Err()
	})
	s.AddTool(&mcp.Tool{Name: "slow_then_add", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// Adds a tool (so the client gets tools/list_changed) and answers
		// only after the client has seen it.
		s.AddTool(&mcp.Tool{Name: "added", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added ok"}}}, nil
		})
		time.Sleep(300 * time.Millisecond)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slow done"}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "fails", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such issue"}}}, nil
	})
	// ask, open_url and sample need the client's input; they ask the
	// protocol's way (input requests answered by a retried call), which
	// go-sdk turns into server-to-client requests for older clients.
	answer := func(req *mcp.CallToolRequest, key string) mcp.InputResponse {
		if req.Params.InputResponses == nil {
			return nil
		}
		return req.Params.InputResponses[key]
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r, ok := answer(req, "colour").(*mcp.ElicitResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"colour": &mcp.ElicitParams{Message: "Which colour?", RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{"colour": map[string]any{"type": "string", "enum": []any{"red", "blue"}}, "count": map[string]any{"type": "integer", "minimum": 1, "maximum": 9, "default": 2},
					"email": map[string]any{"type": "string", "format": "email"}},
				"required": []any{"colour"},
			}}}}, nil
		}
		data, _ := json.Marshal(r.Content)
		return text(r.Action + " " + string(data)), nil
	})
	s.AddTool(&mcp.Tool{Name: "open_local", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r, ok := answer(req, "local").(*mcp.ElicitResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"local": &mcp.ElicitParams{Mode: "url", Message: "Open this", URL: "file:///etc/passwd", ElicitationID: "el-2"}}}, nil
		}
		return text(r.Action), nil
	})
	s.AddTool(&mcp.Tool{Name: "open_url", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r, ok := answer(req, "login").(*mcp.ElicitResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"login": &mcp.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://auth.example.com/start?state=abc", ElicitationID: "el-1"}}}, nil
		}
		return text(r.Action), nil
	})
	s.AddTool(&mcp.Tool{Name: "sample", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Session.InitializeParams().Capabilities.Sampling == nil {
			return text("sampling not advertised"), nil
		}
		r, ok := answer(req, "hi").(*mcp.CreateMessageWithToolsResult)
		if !ok || len(r.Content) == 0 {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"hi": &mcp.CreateMessageParams{MaxTokens: 5000, SystemPrompt: "Be brief.",
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "say hi"}}}}}}, nil
		}
		return text(r.Model + ": " + r.Content[0].(*mcp.TextContent).Text), nil
	})
	return s
}
