package diagnostics

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/internal/config"
)

// TestFirstQueryEndsTheWarmUp: a server that serves one request at a time
// (as gopls does) is still building its symbol index for the warm-up
// when the first question, about a file's diagnostics, comes: the
// warm-up is cancelled and the question answered, instead of waiting
// behind an index it does not need.
func TestFirstQueryEndsTheWarmUp(t *testing.T) {
	log := filepath.Join(t.TempDir(), "fakels.log")
	p, root := fakePool(t, Options{Wait: 20 * time.Second, Servers: map[string]config.LSP{"fake": {RootMarkers: []string{"project.txt"}}}},
		"-hold-symbols", "-log", log)
	write(t, filepath.Join(root, "project.txt"), "the project\n")
	file := filepath.Join(root, "sub", "b.txt") // not the file the warm-up opens (the shallowest)
	write(t, file, "fine\nERROR here\n")

	p.Warm(context.Background(), time.Minute)
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(log)
		if strings.Contains(string(b), "recv workspace/symbol") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the warm-up sent no workspace/symbol; fakels got:\n%s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}

	rep, err := p.Diagnostics(context.Background(), file, 0)
	if err != nil || rep.Stale || len(rep.Items) != 1 || rep.Items[0].Severity != "error" {
		b, _ := os.ReadFile(log)
		t.Fatalf("diagnostics while the warm-up's symbol query was held = %+v, %v; want the file's one error, fresh\nfakels got:\n%s", rep, err, b)
	}
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), "recv $/cancelRequest") {
		t.Errorf("the warm-up's query was not cancelled; fakels got:\n%s", b)
	}
}
