package bus_test

import (
	"fmt"
	"testing"

	"github.com/darman-dev/darman/agent/bus"
)

const burst = 1024

// BenchmarkPublish measures what Publish costs the publishing goroutine with
// 0, 1 and 4 subscribers: the readers are paused while a burst of events is
// published, then catch up with the timer stopped. Events never merge.
func BenchmarkPublish(b *testing.B) {
	for _, n := range []int{0, 1, 4} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			bs := bus.New(bus.Options[int]{MaxPending: 2 * burst})
			defer bs.Close()
			gates := make([]chan struct{}, n)
			caughtUp := make(chan struct{})
			for i := range gates {
				gates[i] = make(chan struct{})
				s := bs.Subscribe(b.Context())
				go func() {
					for range gates[i] {
						for d := range s.C() {
							if d.Seq%burst == 0 {
								break
							}
						}
						caughtUp <- struct{}{}
					}
				}()
			}
			defer func() {
				for _, g := range gates {
					close(g)
				}
			}()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 1; i <= b.N; i++ {
				bs.Publish(i)
				if i%burst == 0 {
					b.StopTimer()
					for _, g := range gates {
						g <- struct{}{}
					}
					for range gates {
						<-caughtUp
					}
					b.StartTimer()
				}
			}
		})
	}
}

// BenchmarkPublishWithReaders measures the wall time per event of a publisher
// and readers that run at once, on whatever cores the machine has: Publish
// plus its share of delivering to every subscriber. Events never merge; every
// burst the timer stops until the readers have caught up, so none overflows.
func BenchmarkPublishWithReaders(b *testing.B) {
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			bs := bus.New(bus.Options[int]{MaxPending: 2 * burst})
			defer bs.Close()
			caughtUp := make(chan struct{})
			for range n {
				s := bs.Subscribe(b.Context())
				go func() {
					for d := range s.C() {
						if d.Seq%burst == 0 {
							caughtUp <- struct{}{}
						}
					}
				}()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 1; i <= b.N; i++ {
				bs.Publish(i)
				if i%burst == 0 {
					b.StopTimer()
					for range n {
						<-caughtUp
					}
					b.StartTimer()
				}
			}
		})
	}
}

// BenchmarkPublishMerging is the agent's common case: text deltas of one
// part, merged whenever a reader lags, with readers that never pause.
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
