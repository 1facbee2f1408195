// Command winshell stands in for Git for Windows' bash in the Wine tests
// (cmd/darman/wine_test.go), which cannot install Git for Windows: darman
// runs it as DARMAN_GIT_BASH_PATH, "winshell -c LINE", and it reads a
// line of two commands:
//
//	echo WORDS     prints "winshell: WORDS"
//	echo WORDS > FILE
//	               writes WORDS to FILE
//	cat FILE       prints FILE
//	tree FILE      starts a grandchild that writes a counter to FILE every
//	               50 ms until it is killed, prints "started", and exits,
//	               leaving the grandchild running in darman's job
//	console        opens CONIN$ and prints whose console it reached:
//	               "winshell: console: its own", "... darman's" or
//	               "... none"
//
// A FILE spelt /c/… is drive C:, as Git bash reads it. "winshell beat
// FILE" is that grandchild.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "beat" {
		for i := 0; ; i++ {
			os.WriteFile(os.Args[2], []byte(strconv.Itoa(i)), 0o644)
			time.Sleep(50 * time.Millisecond)
		}
	}
	if len(os.Args) != 3 || os.Args[1] != "-c" {
		fmt.Fprintln(os.Stderr, "usage: winshell -c 'echo WORDS' | 'tree FILE' | console")
		os.Exit(2)
	}
	name, arg, _ := strings.Cut(strings.TrimSpace(os.Args[2]), " ")
	switch name {
	case "echo":
		if words, file, ok := strings.Cut(arg, " > "); ok {
			if err := os.WriteFile(msys(file), []byte(words+"\n"), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			return
		}
		fmt.Println("winshell: " + arg)
	case "cat":
		b, err := os.ReadFile(msys(arg))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.Write(b)
	case "tree":
		cmd := exec.Command(os.Args[0], "beat", arg)
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("started")
	case "console":
		fmt.Println("winshell: " + console())
	default:
		fmt.Fprintf(os.Stderr, "winshell: %s: command not found\n", name)
		os.Exit(127)
	}
}

// msys is the Windows path Git bash gives a program for p: /c/x is C:\x.
func msys(p string) string {
	if len(p) >= 3 && p[0] == '/' && p[2] == '/' {
		return p[1:2] + ":" + strings.ReplaceAll(p[2:], "/", `\`)
	}
	return p
}
