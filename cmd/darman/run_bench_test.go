package main_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// BenchmarkRunTurn measures a one-answer headless turn, `darman run
// --format json` against a model that answers at once (the scripted
// server), in a git repository of a few files: from the process's start
// to the model's first request (first-request-ms: the goal is 8 ms) and to
// its exit (turn-ms: 12 ms), medians and p90 over the runs. The first
// request's arrival is taken by a recording proxy in front of the scripted
// server; the proxy adds its own hop to turn-ms. The first run, not
// counted, is the one that probes the sandbox and records the probe (see
// internal/sandbox); DARMAN_BENCH_FRESH_PROBE=1 deletes the record before
// every run, to measure a boot's first darman. DARMAN_BENCH_BASE=BIN runs
// BIN (another build, with a probe record of its own) after each run, in
// the same minutes, and reports the medians of the pairs' differences
// (first-request-delta-ms, turn-delta-ms: this build's minus BIN's), which
// the machine's load drifts less than either set.
func BenchmarkRunTurn(b *testing.B) {
	home := b.TempDir()
	workspace := filepath.Join(home, "project")
	os.MkdirAll(workspace, 0o755)
	for i := range 20 {
		os.WriteFile(filepath.Join(workspace, fmt.Sprintf("f%d.go", i)), fmt.Appendf(nil, "package p\n\nvar X%d = %d\n", i, i), 0o644)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = workspace
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "start")
	os.WriteFile(filepath.Join(workspace, "f0.go"), []byte("package p\n\nvar X0 = 100\n"), 0o644)

	model := llmtest.Start(b, llmtest.Script{Steps: []llmtest.Step{{Text: "Done."}}})
	target, _ := url.Parse(model.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	var first time.Time
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if first.IsZero() {
			first = time.Now()
		}
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	configDir := filepath.Join(home, "config", "darman")
	os.MkdirAll(configDir, 0o755)
	os.WriteFile(filepath.Join(configDir, "config.json"), fmt.Appendf(nil,
		`{"model": "anthropic/claude-sonnet-4-5", "provider": {"anthropic": {"baseURL": %q, "apiKey": "sk-ant-test-0123456789"}}}`, front.URL), 0o644)
	vars := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache")}
	fresh := os.Getenv("DARMAN_BENCH_FRESH_PROBE") != ""
	run := func(bin string) (toRequest, turn time.Duration) {
		env := vars
		if bin != darmanBin {
			env = append(slices.Clone(vars), "XDG_CACHE_HOME="+filepath.Join(home, "cache-base"))
		}
		if fresh {
			os.RemoveAll(filepath.Join(home, "cache", "darman"))
			os.RemoveAll(filepath.Join(home, "cache-base", "darman"))
		}
		mu.Lock()
		first = time.Time{}
		mu.Unlock()
		cmd := exec.Command(bin, "run", "--format", "json", "say done")
		cmd.Dir = workspace
		cmd.Env = env
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		turn = time.Since(t0)
		if err != nil {
			b.Fatalf("darman run: %v\n%s", err, out)
		}
		mu.Lock()
		defer mu.Unlock()
		if first.IsZero() {
			b.Fatalf("darman run sent no request\n%s", out)
		}
		return first.Sub(t0), turn
	}
	base := os.Getenv("DARMAN_BENCH_BASE")
	run(darmanBin) // the probe's run, and the page cache
	if base != "" {
		run(base)
	}
	var toRequest, turns, requestDelta, turnDelta []time.Duration
	for b.Loop() {
		r, t := run(darmanBin)
		toRequest, turns = append(toRequest, r), append(turns, t)
		if base != "" {
			br, bt := run(base)
			requestDelta, turnDelta = append(requestDelta, r-br), append(turnDelta, t-bt)
		}
	}
	ms := func(ds []time.Duration, q int) float64 {
		slices.Sort(ds)
		return float64(ds[min(len(ds)*q/100, len(ds)-1)]) / 1e6
	}
	b.ReportMetric(ms(toRequest, 50), "first-request-ms")
	b.ReportMetric(ms(toRequest, 90), "first-request-p90-ms")
	b.ReportMetric(ms(turns, 50), "turn-ms")
	b.ReportMetric(ms(turns, 90), "turn-p90-ms")
	if base != "" {
		b.ReportMetric(ms(requestDelta, 50), "first-request-delta-ms")
		b.ReportMetric(ms(turnDelta, 50), "turn-delta-ms")
	}
}
