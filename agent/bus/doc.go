// Package bus is an in-process publish/subscribe bus with one total order of
// events and a written contract for slow subscribers. darman runs one bus per
// session: the agent publishes every observable change of the session, and
// the LSP front, the CLI, the store writer and the VS Code panel subscribe.
//
// Start with [New], [Bus.Publish] and [Bus.Subscribe]; read deliveries from
// [Subscription.C].
//
// # Order
//
// Every event published on a bus gets the next sequence number, starting at
// [Options.LastSeq]+1. Concurrent Publish calls are safe; their order is the
// order in which they took the bus's lock, and it is the same for every
// subscriber. A subscription delivers its events in sequence order, each
// subscriber independently of the others.
//
// A subscription receives exactly the events published after it was
// registered: those with a sequence number greater than [Subscription.Since].
// Everything published after Subscribe returns is therefore included. To
// show a session without a gap, subscribe first, then load the history from
// the store, then skip deliveries whose Seq is not greater than the last
// sequence number the history held.
//
// # Slow subscribers
//
// Publish never blocks on subscribers: the agent loop must not stall because
// an editor is slow. Each subscription has its own queue of events not yet
// handed to its channel:
//
//   - While events wait in the queue, a new event that [Options.Coalesce]
//     accepts with the last queued one is merged into it, and the merged
//     delivery carries the sequence number of the newest event it contains.
//     A slow reader therefore gets fewer, bigger text deltas, and sees gaps
//     in Seq where events were merged. The event already offered on the
//     channel is never merged into.
//   - Nothing else is ever dropped or reordered.
//   - If more than [Options.MaxPending] events wait in the queue (merged
//     events count once), the subscription ends with [ErrOverflow]: its
//     queue is discarded and its channel closed. The subscriber must resync
//     from the store and subscribe again. Other subscriptions are unaffected,
//     and the publisher is never slowed.
//
// # Ending
//
// A subscription ends when [Subscription.Unsubscribe] is called, when the
// context given to Subscribe is done, when the bus is closed with
// [Bus.Close], or on overflow. Its channel is then closed, events still
// queued for it are discarded, and [Subscription.Err] says why it ended.
// Unsubscribe and Close return only after the subscriptions' goroutines have
// exited and their channels are closed. After Close, Publish is a no-op that
// returns 0, and Subscribe returns a subscription that has already ended
// with [ErrClosed]. A caller that needs the last events of a session reads
// until the event that ends it before closing the bus.
//
// # Design
//
// Each subscription owns a slice queue under its own mutex and one goroutine
// that moves the queue's head to an unbuffered channel. Publish appends to
// each queue and wakes the goroutine through a one-slot notify channel, so
// its cost is a lock, an append and a non-blocking send per subscriber. The
// goroutine is what lets readers use C in a select with their other inputs;
// a channel with a buffer instead could neither merge queued deltas nor
// report an overflow without blocking or dropping. A session has a handful
// of subscribers, so one goroutine each costs nothing that matters, and
// every one of them is owned and waited for.
package bus
