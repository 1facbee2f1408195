package session_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: a
// closed service has ended its turns, their tool calls and sub-agents.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
