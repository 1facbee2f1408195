// Package early is the sandbox helper itself, `darman sandbox-exec`, run
// from its package initializer before the rest of darman is initialized: it
// imports only errors, runtime, syscall, unsafe and unicode/utf8, reads its arguments from
// /proc/self/cmdline, decodes the JSON policy without reflection, and
// confines its own thread (the read-only bind mounts, no_new_privs, the
// seccomp socket filter, Landlock through its raw system calls) before
// execve'ing the command.
//
// Its Confine is also what internal/sandbox applies to the thread it starts
// a command from. Policy is the helper's wire format.
package early
