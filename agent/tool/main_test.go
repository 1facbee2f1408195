package tool_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test must leave no goroutine behind: the readers and waiters of
// commands, the search workers, rg's pipes.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
