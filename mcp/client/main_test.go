package client_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain doubles as a tiny MCP server with faults on demand, so the
// tests run real processes: DARMAN_FAKE_MCP names the behaviour.
func TestMain(m *testing.M) {
	if mode := os.Getenv("DARMAN_FAKE_MCP"); mode != "" {
		fakeServer(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type echoIn struct {
	Text string `json:"text"`
}

func fakeServer(mode string) {
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
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}, &mcp.TextContent{Text: "done"}}}, nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "crash", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Exit(7)
		return nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "hang", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-ctx.Done()
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
	return s
}
