//go:build windows

package store

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// On Windows the owner serves the other darman processes on TCP loopback:
// Wine (which CI runs darman.exe under) has no AF_UNIX, and its named
// pipes do not complete an overlapped ConnectNamedPipe (go-winio's Accept
// never returns there). The owner listens on 127.0.0.1 at a port the
// system picks and writes "ADDRESS TOKEN" to DIR\owner.addr, in the
// user's own %LOCALAPPDATA%; a client reads it, connects and sends the
// token first. A connection that does not is closed before anything is
// served, so other users of the machine, who cannot read the file, get
// nothing.

// ownerAddress is the file that says where the owner listens.
func ownerAddress(dir string) string { return filepath.Join(dir, "owner.addr") }

// tokenWait bounds how long a new connection has to send the token, and
// maxUnchecked how many are read at once: any local user can connect, and
// one that sends nothing must not hold up the darman processes that do
// (see tokenListener).
const (
	tokenWait    = 5 * time.Second
	maxUnchecked = 32
)

// listenOwner listens on loopback and writes addr, replacing what an owner
// that crashed left. The caller holds the owner lock.
func listenOwner(addr string) (net.Listener, error) {
	fail := func(err error) (net.Listener, error) {
		return nil, fmt.Errorf("cannot serve the session store to other darman processes (%s): %w", addr, err)
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	token := hex.EncodeToString(secret)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	tmp := addr + ".tmp"
	if err := os.WriteFile(tmp, []byte(ln.Addr().String()+" "+token+"\n"), 0o600); err != nil {
		ln.Close()
		return fail(err)
	}
	if err := os.Rename(tmp, addr); err != nil {
		ln.Close()
		return fail(err)
	}
	return newTokenListener(ln, token, tokenWait, maxUnchecked), nil
}

// dialOwner reads where the owner listens, connects and sends the token.
// A missing or stale file fails at once; the caller retries.
func dialOwner(addr string) (net.Conn, error) {
	f, err := os.Open(addr)
	if err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	f.Close()
	hostPort, token, ok := strings.Cut(strings.TrimSpace(line), " ")
	if err != nil || !ok {
		return nil, errors.New(addr + " is incomplete")
	}
	c, err := net.DialTimeout("tcp", hostPort, time.Second)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte(token + "\n")); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
