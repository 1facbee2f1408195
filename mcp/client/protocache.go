package client

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// protoCache remembers, across runs, which servers do not speak
// server/discover (protocol 2026-07-28), so their next start goes straight
// to initialize instead of probing: one round trip less, and no second
// spawn for a server that exits on the probe (go-sdk #1177).
//
// A server is known by a digest of where it is (command and arguments, or
// URL), so the file holds no secret. It is a cache: a file that cannot be
// read or written only costs the probe.
type protoCache struct {
	path string

	mu      sync.Mutex
	entries map[string]string // definition digest → the protocol it spoke
}

func openProtoCache(path string) *protoCache {
	c := &protoCache{path: path, entries: map[string]string{}}
	if path == "" {
		return c
	}
	if data, err := os.ReadFile(path); err == nil {
		var entries map[string]string
		if json.Unmarshal(data, &entries) == nil {
			for k, v := range entries {
				c.entries[k] = v
			}
		}
	}
	return c
}

// key identifies a server by where it is.
func (d Definition) cacheKey() string {
	h := sha256.New()
	if d.URL != "" {
		h.Write([]byte("url\x00" + d.URL))
	} else {
		h.Write([]byte("cmd\x00" + d.Command + "\x00" + strings.Join(d.Args, "\x00")))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// legacy reports whether the server was last seen speaking a protocol
// older than server/discover.
func (c *protoCache) legacy(d Definition) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.entries[d.cacheKey()]
	return ok && v < discoverVersion
}

// remember records the protocol a server spoke, writing the file when it
// changed.
func (c *protoCache) remember(d Definition, protocol string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := d.cacheKey()
	if c.entries[key] == protocol {
		return
	}
	c.entries[key] = protocol
	if c.path == "" {
		return
	}
	data, err := json.MarshalIndent(c.entries, "", "  ")
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(c.path), 0o700) != nil {
		return
	}
	// Several darman processes may write it at once: each through a file
	// of its own, renamed into place whole.
	f, err := os.CreateTemp(filepath.Dir(c.path), filepath.Base(c.path)+".*.tmp")
	if err != nil {
		return
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), c.path) != nil {
		os.Remove(f.Name())
	}
}
