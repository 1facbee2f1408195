//go:build !unix

package permission

import (
	"io/fs"
	"os"
)

// listNames returns the names in dir, each with typeUnknown, nil when it
// holds more than max or cannot be read.
func listNames(dir string, max int) map[string]fs.FileMode {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	list, err := f.Readdirnames(max + 1)
	if (err != nil && len(list) == 0) || len(list) > max {
		return nil
	}
	names := make(map[string]fs.FileMode, len(list))
	for _, n := range list {
		names[n] = typeUnknown
	}
	return names
}
