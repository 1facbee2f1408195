// Package sandbox confines the shell commands the model runs, with what the
// operating system offers: Landlock (plus a small seccomp filter and, for
// the protected paths, a private mount namespace) on Linux, Seatbelt's
// sandbox-exec on macOS, nothing elsewhere, which [Status] then says.
//
// Start with [New]: a [Sandbox] is built once by the composition root and
// shared by every session. [Sandbox.Wrap] prepares an *exec.Cmd and
// [Start] starts it (internal/child's Start calls it). On Linux a command
// is started from a thread of darman's that confines itself first and is
// thrown away after the command (see thread_linux.go): a private copy of
// the mount namespace of the commands' PID namespace's init
// (pidns_linux.go), in which everything but the writable directories is
// read-only and the protected paths too, that PID namespace for the
// command, no capability left for it, no_new_privs, the seccomp filter
// and the Landlock ruleset, all per thread. Where darman may not mount
// (a user other than root), commands are started the same way by the
// workspace's namespace holder, a darman process in a user namespace of
// its own, whose threads may mount there (holder_linux.go). The editor's
// terminal runs darman itself as "darman sandbox-exec": that small
// process makes the same read-only view in its own mount namespace,
// confines its one thread the same way (without the PID namespace), then
// execve's the shell. It does so from the initializer of
// internal/sandbox/early, which imports only syscall,
// so the rest of darman is never initialized in it ([Exec] is the same
// helper for what that package leaves to darman). The rest of darman's
// process is never restricted.
//
// The policy ([Policy], built per command by [Sandbox.Policy]):
//
//   - Writes: the workspace, the configured writable directories, a
//     per-session temporary directory (TMPDIR points there), and the
//     toolchains' caches (Go's build and module caches, npm, pnpm, yarn,
//     pip, cargo, plus Options.Caches).
//   - Reads: everything outside the home directory, and inside it only the
//     toolchains' directories, the workspace and Options.ReadableDirs.
//     Landlock only allows, so "everything but home" is written as: every
//     entry of / except the one leading to home, every sibling on the way
//     down, and then the allowed directories inside home. The secret stores
//     (~/.ssh, ~/.aws, ~/.gnupg, ~/.config/gh, ~/.docker, ~/.kube,
//     ~/.netrc, keychains, browser profiles, other projects) are simply not
//     in the list.
//   - Network: off unless Options.Network or the request asks for it: no
//     TCP connect or bind (Landlock, ABI 4+) and no new AF_INET, AF_INET6
//     or AF_VSOCK sockets (seccomp), which also covers UDP and multipath TCP
//     that Landlock's ABI 7 does not see.
//   - Unix sockets: abstract ones to processes outside the sandbox are
//     refused by Landlock's scoping (ABI 6); pathname ones by Landlock from
//     ABI 9, and below that by refusing new AF_UNIX sockets (seccomp),
//     unless Options.UnixSockets.
//   - Protected paths (Options.Protected: darman passes
//     agent/permission.ProtectedPaths, the one list; and Options.Protect)
//     that exist when the command starts are bind-mounted read-only over
//     themselves, and their directories pinned so they cannot be renamed
//     away, while .git's index, objects, refs and logs stay writable, so
//     git add and git commit work. Those that do not exist cannot be
//     created where a mount can stop it: in a git directory a placeholder
//     git reads as absent is bound read-only (removed at Close), below
//     the root the nearest existing directory is read-only; at the root
//     itself nothing stops a command making one (see missingProtected).
package sandbox
