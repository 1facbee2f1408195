package main

import (
	"log/slog"
	"runtime/debug"
)

// releaseStartup gives back what starting cost and is not used while a
// server waits for its client: the garbage of start-up goes back to the
// system now rather than over the next minutes, then the pages of the
// binary that start-up touched (dropStartupPages), which the collection
// just touched again (the configuration, other tools' MCP files among
// it, can be megabytes of garbage). The long-running servers call it when
// they start waiting: darman lsp once its agent is up, darman acp once
// initialize is answered and after each agent start.
func releaseStartup(log *slog.Logger, who string) {
	debug.FreeOSMemory()
	if err := dropStartupPages(); err != nil {
		log.Debug(who+": the start-up pages stay mapped", "err", err)
	}
}
