//go:build unix

package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// ownerAddress is where the owner listens: a Unix socket in the data
// directory. Unix socket paths are limited to about 100 bytes, so a long
// data directory gets a hashed name in the temp directory instead.
func ownerAddress(dir string) string {
	p := filepath.Join(dir, "owner.sock")
	if len(p) < 100 {
		return p
	}
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(os.TempDir(), "darman-"+hex.EncodeToString(sum[:8])+".sock")
}

// listenOwner serves the store on the socket at addr, readable and
// writable by this user only. The caller holds the owner lock.
func listenOwner(addr string) (net.Listener, error) {
	// A socket file left by an owner that crashed is stale: the lock says
	// nobody serves it.
	if err := os.Remove(addr); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("cannot remove the stale socket %s: %w", addr, err)
	}
	ln, err := net.Listen("unix", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot serve the session store to other darman processes on %s: %w", addr, err)
	}
	os.Chmod(addr, 0o600)
	return ln, nil
}

// dialOwner connects to the owner listening at addr.
func dialOwner(addr string) (net.Conn, error) { return net.Dial("unix", addr) }
