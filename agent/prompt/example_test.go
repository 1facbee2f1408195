package prompt_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent/prompt"
)

func ExampleSplitArgs() {
	for _, w := range prompt.SplitArgs(`fix "the parser" don't 'break it'`) {
		fmt.Printf("[%s]", w)
	}
	fmt.Println()
	// Output:
	// [fix][the parser][don't][break it]
}

func ExampleCommand_Expand() {
	root, _ := os.MkdirTemp("", "darman-example")
	defer os.RemoveAll(root)
	os.MkdirAll(filepath.Join(root, ".darman", "command"), 0o755)
	os.WriteFile(filepath.Join(root, "VERSION"), []byte("1.4.2\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".darman", "command", "release.md"), []byte(`---
description: Prepare a release
argument-hint: <version> [notes]
---
Release $1 (was !`+"`cat VERSION`"+`). Notes: $2
@VERSION
`), 0o644)

	cmds := prompt.LoadCommands(prompt.Dirs{Root: root})
	cmd, _ := cmds.Get("release")
	fmt.Println(cmd.Description, "|", cmd.ArgumentHint)
	// The loop wires Run to the bash permission and tool; here it reads the
	// one file the template asks for.
	run := func(ctx context.Context, command string) (string, error) {
		b, err := os.ReadFile(filepath.Join(root, strings.TrimPrefix(command, "cat ")))
		return string(b), err
	}
	// Attachable says which files may go to the model; the loop's refuses
	// secrets (complete.Attachable). Without one, no @path is attached.
	attachable := func(root, path string) (string, error) {
		if filepath.Base(path) == ".env" {
			return "", errors.New("a secret")
		}
		return path, nil
	}
	msg, err := cmd.Expand(context.Background(), `1.5.0 "faster startup" and fewer bugs`, prompt.ExpandOptions{Root: root, Run: run, Attachable: attachable})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(msg)
	// Output:
	// Prepare a release | <version> [notes]
	// Release 1.5.0 (was 1.4.2). Notes: faster startup and fewer bugs
	// VERSION:
	// ```
	// 1.4.2
	// ```
}

func ExampleBuild() {
	root, _ := os.MkdirTemp("", "darman-example")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("Run make check before finishing.\n"), 0o644)

	p, err := prompt.Build(context.Background(), prompt.Options{
		Root:      root,
		Tools:     []string{"read", "grep"},
		Now:       time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC),
		LookupEnv: func(string) (string, bool) { return "", false },
		Git:       func(context.Context) (string, string, error) { return "main", " M main.go", nil },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, part := range p.Parts {
		if i == p.Stable {
			fmt.Println("-- cache breakpoint --")
		}
		first, _, _ := strings.Cut(part.Text, "\n")
		fmt.Printf("%s: %s\n", part.Kind, first)
	}
	// Output:
	// base: You are darman, a coding agent working in the user's workspace through tools. The user sees each tool call.
	// project: Instructions from AGENTS.md:
	// -- cache breakpoint --
	// environment: Environment at the start of the session:
}
