package main

import (
	"testing"

	"github.com/darman-dev/darman/internal/lazyre"
)

// TestLazyPatternsCompile compiles every pattern darman's packages leave to
// first use (internal/lazyre), since a bad one would only panic when used.
func TestLazyPatternsCompile(t *testing.T) {
	if err := lazyre.Check(); err != nil {
		t.Fatal(err)
	}
}
