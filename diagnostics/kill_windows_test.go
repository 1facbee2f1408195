//go:build windows

package diagnostics

import "os"

// syscall_kill kills the leader of the job pgid names, as a crash would.
func syscall_kill(pgid int) {
	if p, err := os.FindProcess(pgid); err == nil {
		p.Kill()
	}
}
