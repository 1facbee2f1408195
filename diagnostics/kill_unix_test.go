//go:build unix

package diagnostics

import "syscall"

func syscall_kill(pgid int) { syscall.Kill(-pgid, syscall.SIGKILL) }
