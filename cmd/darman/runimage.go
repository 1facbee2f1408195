package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/session"
)

// readImages reads the files of darman run's --image flags as prompt
// parts, refusing one that is not an image darman can send before
// anything starts.
func readImages(paths []string) ([]session.Part, error) {
	var out []session.Part
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("--image %s: %w", p, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("--image %s: not a regular file", p)
		}
		if fi.Size() > llm.MaxImageInput {
			return nil, fmt.Errorf("--image %s: %d MiB; darman takes images up to %d MiB: make a smaller copy", p, fi.Size()>>20, llm.MaxImageInput>>20)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("--image %s: %w", p, err)
		}
		info, err := llm.InspectImage(data)
		if err != nil {
			return nil, fmt.Errorf("--image %s: %w", p, err)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			abs = p
		}
		out = append(out, session.Image(abs, info.MediaType, data))
	}
	return out, nil
}
