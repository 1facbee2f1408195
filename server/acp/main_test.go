package acp_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: Serve
// waits for its connection's handlers, and the sessions stop with it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
