package bus_test

import (
	"fmt"
	"testing"

	"github.com/darman-dev/darman/agent/bus"
)

// BenchmarkPublish measures what Publish costs the publisher with 0, 1 and 4
// subscribers that keep up. Events never merge. Every burst the timer stops
// until each reader has caught up, so no subscription overflows and what is
// timed is Publish alone (including waking the subscription goroutines).
func BenchmarkPublish(b *testing.B) {
	const burst = 1024
	for _, n := range []int{0, 1, 4} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			bs := bus.New(bus.Options[int]{MaxPending: 2 * burst})
			defer bs.Close()
			caughtUp := make([]chan struct{}, n)
			for i := range caughtUp {
				caughtUp[i] = make(chan struct{})
				s := bs.Subscribe(b.Context())
				go func() {
					for d := range s.C() {
						if d.Seq%burst == 0 {
							caughtUp[i] <- struct{}{}
						}
					}
				}()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 1; i <= b.N; i++ {
				if bs.Publish(i) == 0 {
					b.Fatal("Publish on an open bus returned 0")
				}
				if i%burst == 0 {
					b.StopTimer()
					for _, c := range caughtUp {
						<-c
					}
					b.StartTimer()
				}
			}
		})
	}
}

// BenchmarkPublishMerging measures Publish of text deltas that merge whenever
// a reader lags, the agent's common case, with readers that never pause.
func BenchmarkPublishMerging(b *testing.B) {
	type chunk struct {
		Part int
		Len  int
	}
	merge := func(prev, next chunk) (chunk, bool) {
		return chunk{prev.Part, prev.Len + next.Len}, prev.Part == next.Part
	}
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			bs := bus.New(bus.Options[chunk]{Coalesce: merge})
			defer bs.Close()
			for range n {
				s := bs.Subscribe(b.Context())
				go func() {
					for range s.C() {
					}
				}()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				bs.Publish(chunk{Part: 1, Len: 5})
			}
		})
	}
}
