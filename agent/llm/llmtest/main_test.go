package llmtest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that a closed server leaves no goroutine behind, stalled
// answers included.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
