// Package startup gives back, once a long-running darman server has
// started and waits for its client, the memory that starting cost and
// that waiting does not use: Release is the one call.
package startup

import (
	"log/slog"
	"runtime/debug"
)

// Release gives back what starting cost and is not used while a
// server waits for its client: the garbage of start-up goes back to the
// system now rather than over the next minutes, then the pages of the
// binary that start-up touched (dropStartupPages), which the collection
// just touched again (the configuration, other tools' MCP files among
// it, can be megabytes of garbage). The long-running servers call it when
// they start waiting: darman lsp once its agent is up, darman acp once
// initialize is answered and after each agent start. who names the
// caller in the debug log line saying why the pages stay, when they do.
func Release(log *slog.Logger, who string) {
	debug.FreeOSMemory()
	if err := dropStartupPages(); err != nil {
		log.Debug(who+": the start-up pages stay mapped", "err", err)
	}
}
