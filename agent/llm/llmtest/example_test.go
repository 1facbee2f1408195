package llmtest_test

import (
	"context"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

func Example() {
	srv, err := llmtest.NewServer(llmtest.Script{Steps: []llmtest.Step{{Text: "Hello from the script."}}}, nil)
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	client := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(srv.URL+"/"), option.WithAPIKey("test"))
	stream := client.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
		Model: "claude-sonnet-4-5", MaxTokens: 100,
		System:   []anthropic.TextBlockParam{{Text: "Be brief."}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	for stream.Next() {
		if ev := stream.Current(); ev.Type == "content_block_delta" {
			fmt.Print(ev.Delta.Text)
		}
	}
	fmt.Println()

	c := srv.ModelCalls()[0]
	fmt.Println(c.API, c.Step, c.Get("system.0.text"))
	// Output:
	// Hello from the script.
	// anthropic 0 Be brief.
}
