package lsp_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: every
// server, relay, turn and progress goroutine has an owner that stops it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
