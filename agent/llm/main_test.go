package llm_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: streams that
// finish, fail, are cancelled or closed must release their connections and
// timers.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
