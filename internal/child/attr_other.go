//go:build unix && !linux

package child

import "syscall"

// setDeathSignal does nothing: this OS has no parent-death signal, and the
// Registry stops what is left when darman exits.
func setDeathSignal(*syscall.SysProcAttr) {}
