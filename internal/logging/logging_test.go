package logging_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/darman-dev/darman/internal/logging"
)

// lines returns the log output with each record's time removed.
func lines(out []byte) []string {
	s := regexp.MustCompile(`(?m)^time=\S+ `).ReplaceAllString(string(out), "")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func TestNewWritesTextToStderr(t *testing.T) {
	var stderr bytes.Buffer
	log, closer, err := logging.New(logging.Options{Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("hidden at the default level")
	log.Info("session started", "session", "01J", "steps", 3)
	log.Warn("slow", "ms", 1500)
	if err := closer.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	want := []string{
		"level=INFO msg=\"session started\" session=01J steps=3",
		"level=WARN msg=slow ms=1500",
	}
	if got := lines(stderr.Bytes()); !equal(got, want) {
		t.Errorf("output:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestNewLevels(t *testing.T) {
	for _, tt := range []struct {
		level string
		want  []string
	}{
		{"debug", []string{"level=DEBUG msg=d", "level=INFO msg=i", "level=WARN msg=w", "level=ERROR msg=e"}},
		{"INFO", []string{"level=INFO msg=i", "level=WARN msg=w", "level=ERROR msg=e"}},
		{"warn", []string{"level=WARN msg=w", "level=ERROR msg=e"}},
		{"error", []string{"level=ERROR msg=e"}},
	} {
		var stderr bytes.Buffer
		log, _, err := logging.New(logging.Options{Level: tt.level, Stderr: &stderr})
		if err != nil {
			t.Fatal(err)
		}
		log.Debug("d")
		log.Info("i")
		log.Warn("w")
		log.Error("e")
		if got := lines(stderr.Bytes()); !equal(got, tt.want) {
			t.Errorf("level %s: got %q; want %q", tt.level, got, tt.want)
		}
	}

	_, _, err := logging.New(logging.Options{Level: "verbose"})
	want := `logging: unknown level "verbose": expected "debug", "info", "warn" or "error"`
	if err == nil || err.Error() != want {
		t.Errorf("bad level: err = %v; want %s", err, want)
	}
}

func TestNewAppendsToFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "darman.log")
	var stderr bytes.Buffer
	for _, msg := range []string{"first", "second"} {
		log, closer, err := logging.New(logging.Options{File: path, Stderr: &stderr})
		if err != nil {
			t.Fatal(err)
		}
		log.Info(msg)
		if err := closer.Close(); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lines(data), []string{"level=INFO msg=first", "level=INFO msg=second"}; !equal(got, want) {
		t.Errorf("file holds %q; want %q (appended)", got, want)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr got %q while logging to a file", stderr.String())
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("log file mode = %o; want 600", perm)
	}
}

func TestNewFileErrors(t *testing.T) {
	dir := t.TempDir()
	_, _, err := logging.New(logging.Options{File: dir})
	if err == nil || !strings.HasPrefix(err.Error(), "logging: open the log file: ") {
		t.Errorf("a directory as the log file: err = %v", err)
	}
	_, _, err = logging.New(logging.Options{Stderr: os.Stdout})
	if err == nil || !strings.Contains(err.Error(), "refusing to log to stdout") {
		t.Errorf("stdout: err = %v", err)
	}
}

func equal(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}
