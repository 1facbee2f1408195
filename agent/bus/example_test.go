package bus_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/darman-dev/darman/agent/bus"
)

func ExampleBus() {
	b := bus.New(bus.Options[string]{})
	defer b.Close()
	sub := b.Subscribe(context.Background())
	defer sub.Unsubscribe()

	b.Publish("running")
	b.Publish("idle")
	for d := range sub.C() {
		fmt.Println(d.Seq, d.Event)
		if d.Event == "idle" {
			break
		}
	}
	// Output:
	// 1 running
	// 2 idle
}

// A slow reader may get adjacent text deltas merged, so it reads fewer,
// bigger chunks; the text it assembles is the same.
func ExampleOptions_coalesce() {
	type chunk struct {
		Part int
		Text string
	}
	b := bus.New(bus.Options[chunk]{
		Coalesce: func(prev, next chunk) (chunk, bool) {
			if prev.Part != next.Part {
				return chunk{}, false
			}
			return chunk{prev.Part, prev.Text + next.Text}, true
		},
	})
	defer b.Close()
	sub := b.Subscribe(context.Background())
	defer sub.Unsubscribe()

	var last uint64
	for _, text := range []string{"hello", ", ", "world"} {
		last = b.Publish(chunk{Part: 1, Text: text})
	}
	var text strings.Builder
	for d := range sub.C() {
		text.WriteString(d.Event.Text)
		if d.Seq == last {
			break
		}
	}
	fmt.Println(text.String())
	// Output: hello, world
}
