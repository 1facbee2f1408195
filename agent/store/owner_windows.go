//go:build windows

package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

// ownerAddress is where the owner listens on Windows: a named pipe whose
// name comes from the data directory (Windows' file system has no socket
// files; Wine has no AF_UNIX at all).
func ownerAddress(dir string) string { return pipeName(dir) }

// pipeName names the pipe for the data directory dir: the same directory,
// however it is spelt (case, separators), gives the same name.
func pipeName(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	sum := sha256.Sum256([]byte(strings.ToLower(filepath.Clean(dir))))
	return `\\.\pipe\darman-store-` + hex.EncodeToString(sum[:12])
}

// listenOwner serves the store on the named pipe addr, open to this user
// only. The caller holds the owner lock; a pipe of that name served by
// anyone else (a squatter) makes it fail rather than share.
func listenOwner(addr string) (net.Listener, error) {
	sd, err := userOnly()
	if err != nil {
		return nil, fmt.Errorf("cannot serve the session store to other darman processes on %s: %w", addr, err)
	}
	ln, err := winio.ListenPipe(addr, &winio.PipeConfig{SecurityDescriptor: sd})
	if err != nil {
		return nil, fmt.Errorf("cannot serve the session store to other darman processes on %s: %w", addr, err)
	}
	return ln, nil
}

// userOnly is a security descriptor (SDDL) that gives this process's user
// full access and nobody else any.
func userOnly() (string, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("find this process's user: %w", err)
	}
	return "D:P(A;;GA;;;" + u.User.Sid.String() + ")", nil
}

// dialOwner connects to the owner's pipe; a pipe not there yet fails at
// once (the caller retries), a busy one is waited for up to a second.
func dialOwner(addr string) (net.Conn, error) {
	d := time.Second
	return winio.DialPipe(addr, &d)
}
