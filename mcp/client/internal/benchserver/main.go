// Command benchserver is the smallest MCP server over stdio, for the
// client's start-up benchmarks: it waits BENCH_DELAY (a Go duration, the
// time a real server spends loading) and then serves one tool, echo.
package main

import (
	"context"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text"`
}

func main() {
	if d, err := time.ParseDuration(os.Getenv("BENCH_DELAY")); err == nil {
		time.Sleep(d)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "benchserver", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	s.Run(context.Background(), &mcp.StdioTransport{})
}
