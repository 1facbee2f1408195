package permission

import (
	"slices"
	"strings"
)

// writeTargets marks the arguments a known writer writes to, so that a
// protected path (see Protected) among them is asked as protected_path:
//
//	tee FILE…                  every operand
//	cp, mv, install, ln … DEST  the last operand, or -t DIR / --target-directory=DIR
//	sed -i, perl -i … FILE…     every operand after the script
//	touch, truncate FILE…       every operand
//	dd of=FILE                  (the value after '=' is a path of its own)
//	go build|test -o FILE, sort -o FILE
//
// It is a best effort for the usual tools; any other command's arguments
// are plain operands, still checked for leaving the workspace.
//
// It returns nil, not a slice of false, for a command that writes none:
// most commands are not writers.
func writeTargets(args []string) []bool {
	if len(args) < 2 {
		return nil
	}
	var out []bool
	mark := func(i int) {
		if out == nil {
			out = make([]bool, len(args))
		}
		out[i] = true
	}
	operands := func(from int) []int {
		var idx []int
		for i := from; i < len(args); i++ {
			if args[i] == "--" {
				for j := i + 1; j < len(args); j++ {
					idx = append(idx, j)
				}
				break
			}
			if !strings.HasPrefix(args[i], "-") || args[i] == "-" {
				idx = append(idx, i)
			}
		}
		return idx
	}
	valueOf := func(flags ...string) {
		for i, a := range args {
			for _, f := range flags {
				if a == f && i+1 < len(args) {
					mark(i + 1)
				}
				if strings.HasPrefix(a, f) && a != f {
					mark(i) // -ofile, --output=file
				}
			}
		}
	}
	switch args[0] {
	case "tee", "touch", "truncate":
		for _, i := range operands(1) {
			mark(i)
		}
	case "cp", "mv", "install", "ln", "rsync":
		valueOf("-t", "--target-directory")
		if idx := operands(1); len(idx) > 0 {
			mark(idx[len(idx)-1])
		}
	case "sed", "perl":
		inPlace := slices.ContainsFunc(args[1:], func(a string) bool {
			return strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "--in-place") ||
				(len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "i"))
		})
		if idx := operands(1); inPlace && len(idx) > 1 {
			for _, i := range idx[1:] {
				mark(i)
			}
		}
	case "sort":
		valueOf("-o", "--output")
	case "go":
		valueOf("-o", "-coverprofile", "-cpuprofile", "-memprofile", "-blockprofile", "-mutexprofile", "-trace", "-outputdir")
	case "git":
		valueOf("--output")
	}
	return out
}

// impliedWrites are the files a command writes that none of its words
// names: git config writes the repository's config (or the user's, with
// --global).
func impliedWrites(args []string) []Path {
	if len(args) < 2 || args[0] != "git" {
		return nil
	}
	sub, i := gitSubcommand(args)
	if sub != "config" {
		return nil
	}
	rest := args[i+1:]
	for _, a := range rest {
		switch {
		case a == "--get" || a == "--get-all" || a == "--get-regexp" || a == "--get-urlmatch" ||
			a == "-l" || a == "--list" || a == "--show-origin" || a == "--show-scope" ||
			a == "get" || a == "list":
			return nil
		case a == "--global":
			return []Path{{Text: ".gitconfig", Home: true, Use: UseWrite}}
		case a == "--system":
			return []Path{{Text: "/etc/gitconfig", Use: UseWrite}}
		case a == "-f" || a == "--file" || strings.HasPrefix(a, "--file="):
			return nil // the file is an operand, checked as one
		}
	}
	dir := ""
	for j := 1; j < i; j++ {
		if args[j] == "-C" && j+1 < i {
			dir = args[j+1] + "/"
		}
	}
	return []Path{{Text: dir + ".git/config", Use: UseWrite}}
}

// gitSubcommand finds git's subcommand after its global options, and its
// index; "" when there is none.
func gitSubcommand(args []string) (string, int) {
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" || a == "--config-env":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a, i
		}
	}
	return "", len(args)
}
