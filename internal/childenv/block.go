package childenv

import (
	"os"
	"slices"
	"strings"
	"sync"
)

// Scrub wipes, in darman's own initial environment block (what another
// process reads as /proc/PID/environ on Linux), the value of every
// variable p keeps from a child for what it is: a name matching
// SecretNames, a value among p.Secrets, a name p.Exclude names. It wipes
// those whatever p.Keep says (a kept variable reaches the child in the
// child's own environment, so darman's copy hides nothing it has) and
// whatever p.Inherit leaves out (that drops variables for not being in a
// list, not for being secret). darman's own copies (os.Environ, os.Getenv)
// are unchanged. It returns the names it wiped now; calling it again with
// the same policy wipes nothing more. Where the system has no such block
// to wipe (every system but Linux, here), it does nothing.
func Scrub(p Policy) ([]string, error) {
	p.Inherit, p.Keep = InheritAll, nil
	drop := func(name, value string) bool { return p.drops(name, value) != "" }
	// The block holds what darman started with, which is what
	// initialEnviron holds: with nothing there to wipe, the block is not
	// read at all (it costs a read of /proc/self/stat and of the block at
	// every start, for nothing, in an environment with no secrets).
	var names []string
	var err error
	// os.Environ keeps the first of two entries of one name, so a secret
	// known by its value may hide in a second one: with values to look
	// for, the block itself is read.
	if len(p.Secrets) > 0 || slices.ContainsFunc(initialEnviron(), func(kv string) bool {
		name, value, ok := strings.Cut(kv, "=")
		return ok && name != "" && value != "" && drop(name, value)
	}) {
		names, err = wipe(drop)
	}
	scrubbed.mu.Lock()
	defer scrubbed.mu.Unlock()
	scrubbed.names = append(scrubbed.names, names...)
	scrubbed.err = err
	return names, err
}

// Scrubbed returns the names Scrub has wiped in this process so far, and
// what its last call could not do.
func Scrubbed() ([]string, error) {
	scrubbed.mu.Lock()
	defer scrubbed.mu.Unlock()
	return append([]string(nil), scrubbed.names...), scrubbed.err
}

// initialEnviron is the environment as the first Scrub saw it: main calls
// Scrub first, before anything could set or unset a variable (darman never
// does), so it holds what the initial block holds. A variable set later is
// not in the block, so it needs no wiping there.
var initialEnviron = sync.OnceValue(os.Environ)

var scrubbed struct {
	mu    sync.Mutex
	names []string
	err   error
}
