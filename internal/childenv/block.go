package childenv

import "sync"

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
	names, err := wipe(func(name, value string) bool { return p.drops(name, value) != "" })
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

var scrubbed struct {
	mu    sync.Mutex
	names []string
	err   error
}
