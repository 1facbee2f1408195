package rpc_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: Run
// waits for every request it started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
