package search

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
)

// ignoreNames are the entries whose presence changes a directory's frame.
var ignoreNames = map[string]bool{".rgignore": true, ".ignore": true, ".gitignore": true, ".git": true}

// walkFiles calls fn with the absolute path of every file under dir that
// the ignore rules keep (see ignore.go), in no particular order. dir itself
// is walked even if a rule above it ignores it. It stops at the first error
// fn returns, or when ctx is done; directories it cannot read are skipped.
func walkFiles(ctx context.Context, root, dir string, fn func(abs string) error) error {
	ig := newIgnorer(root)
	type item struct {
		dir    string
		parent *ignoreFrame
	}
	stack := []item{{dir, ancestorFrames(dir)}}
	var names map[string]bool
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		entries, err := listDir(it.dir)
		if err != nil {
			continue
		}
		names = nil
		for _, e := range entries {
			if ignoreNames[e.Name()] {
				if names == nil {
					names = make(map[string]bool, 4)
				}
				names[e.Name()] = true
			}
		}
		if names == nil {
			names = map[string]bool{}
		}
		frame := loadFrame(it.dir, it.parent, names)
		for _, e := range entries {
			name := e.Name()
			t := e.Type()
			if name == ".git" || t&fs.ModeSymlink != 0 || !t.IsDir() && !t.IsRegular() {
				continue
			}
			abs := it.dir + string(filepath.Separator) + name
			if it.dir == string(filepath.Separator) {
				abs = it.dir + name
			}
			if ig.ignored(frame, abs, t.IsDir()) {
				continue
			}
			if t.IsDir() {
				stack = append(stack, item{abs, frame})
				continue
			}
			if err := fn(abs); err != nil {
				return err
			}
		}
	}
	return nil
}

// listDir lists a directory without sorting it.
func listDir(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}
