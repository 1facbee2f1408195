package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("scripted-model", flag.ContinueOnError)
	flags.SetOutput(stderr)
	addr := flags.String("addr", "127.0.0.1:0", "address to listen on")
	stdinExit := flags.Bool("stdin-eof-exit", false, "exit when standard input is closed")
	verbose := flags.Bool("v", false, "log every call to standard error")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: scripted-model [-addr 127.0.0.1:0] [-stdin-eof-exit] [-v] script.json")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() != 1 {
		flags.Usage()
		return 2
	}
	script, err := llmtest.LoadScript(flags.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "scripted-model:", err)
		return 1
	}
	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	srv, err := llmtest.NewServer(script, &llmtest.Options{Addr: *addr, Logger: logger})
	if err != nil {
		fmt.Fprintln(stderr, "scripted-model:", err)
		return 1
	}
	defer srv.Close()
	fmt.Fprintln(stdout, srv.URL)
	fmt.Fprintf(stderr, "scripted-model: serving %s (Anthropic base URL %s, OpenAI-compatible base URL %s)\n",
		flags.Arg(0), srv.URL, srv.OpenAIURL())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *stdinExit {
		go func() {
			io.Copy(io.Discard, stdin)
			stop()
		}()
	}
	<-ctx.Done()
	return 0
}
