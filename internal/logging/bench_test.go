package logging_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/darman-dev/darman/internal/logging"
)

// BenchmarkHandler compares a record through the redacting handler (with
// ten added secrets) against the same record through slog's text handler
// alone.
func BenchmarkHandler(b *testing.B) {
	r := new(logging.Redactor)
	for i := range 10 {
		r.Add(fmt.Sprintf("configured-secret-%02d", i))
	}
	loggers := map[string]*slog.Logger{
		"plain":     slog.New(slog.NewTextHandler(io.Discard, nil)),
		"redacting": slog.New(r.Handler(slog.NewTextHandler(io.Discard, nil))),
	}
	err := errors.New("upstream: 529 overloaded")
	for _, name := range []string{"plain", "redacting"} {
		log := loggers[name].With("session", "01JABCDEF").WithGroup("turn")
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				log.Info("model call finished", "model", "anthropic/claude-sonnet-4-5",
					"input_tokens", 12034, "url", "https://api.anthropic.com/v1/messages", "err", err)
			}
		})
	}
}
