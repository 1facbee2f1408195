//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/darman-dev/darman/internal/sandbox/early"
)

func kindOf(c capabilities) string {
	if c.abi > 0 {
		return "landlock"
	}
	return ""
}

// probeOS finds the kernel's Landlock ABI and whether the helper can be
// started in a user and mount namespace of its own. record is the file of
// the probe's record (see probecache_linux.go); "" probes every time.
func probeOS(helper, record string) (capabilities, string) {
	var c capabilities
	abi, err := early.ABI()
	switch {
	case err != nil:
		return c, "the kernel offers no Landlock (" + err.Error() + "); Linux 5.13+ with lsm=landlock is needed"
	case abi < 1:
		return c, "the kernel offers no Landlock"
	}
	c.abi = abi
	var reasons []string
	if abi < 4 {
		reasons = append(reasons, fmt.Sprintf("Landlock ABI %d cannot refuse TCP; the seccomp filter refuses new sockets instead", abi))
	}
	if _, err := os.Stat(helper); err != nil {
		return capabilities{}, "the sandbox helper (darman itself) cannot be run: " + err.Error()
	}
	key := ""
	if record != "" {
		key = probeKey(helper)
	}
	recorded := probeRecorded(record, key)
	var probeOut strings.Builder
	if !recorded {
		err = probeHelper(helper, &probeOut)
	}
	// Exit 0: a namespace, with the mount API and a PID namespace's
	// /proc; 3: a namespace without the mount API; 4: without the /proc.
	var probeErr, pidErr error
	why := func() error {
		return errors.New(strings.TrimSpace(strings.TrimPrefix(probeOut.String(), "darman sandbox-exec: ")))
	}
	if ee, ok := err.(*exec.ExitError); ok {
		switch ee.ExitCode() {
		case early.CodeNoView:
			err, probeErr, pidErr = nil, why(), errors.New("needs the read-only view")
		case early.CodeNoPID:
			err, pidErr = nil, why()
		}
	}
	if err == nil {
		c.userns = true
	} else {
		c.usernsErr = err
	}
	// Not a reason: the helper confines as well, only slower.
	c.inThread, _ = inThreadOK()
	var viewErr error
	c.threadNS, viewErr = threadMountNS()
	c.threadNS = c.threadNS && c.inThread
	if c.userns && c.inThread && !c.threadNS {
		c.pool = newHolderPool(helper)
		if recorded {
			c.pool.failed = func() { forgetProbe(record) }
		}
	}
	if !c.threadNS && c.userns {
		// The probe said what the kernel's mount API can do in a user
		// namespace.
		viewErr = probeErr
	}
	c.view = (c.threadNS || c.userns) && viewErr == nil
	c.viewErr = viewErr
	switch {
	case c.threadNS && c.view:
		// darman's own init, started now: the probe is the real thing
		// (it needs no user namespace).
		// A record says it started before: it is started when the
		// first command needs it.
		pn := newPidNS(helper)
		if recorded {
			pn.failed = func() { forgetProbe(record) }
			c.pidns = pn
		} else if _, _, err := pn.get(); err != nil {
			pidErr = err
		} else {
			c.pidns = pn
		}
	case !c.view:
		pidErr = errors.New("it needs the read-only view's mount namespace")
	}
	if pidErr == nil && (c.pidns != nil || c.pool != nil) {
		c.pidOK = true
		if c.pool != nil {
			c.pool.pid = true
		}
	}
	c.pidErr = pidErr
	if !recorded && c.userns && c.view && c.pidOK && probeErr == nil {
		recordProbe(record, key)
	}
	return c, joinReasons(reasons)
}

// probeHelper starts the helper's probe in a user and PID namespace:
// nil when it exited 0, else its exit (what it said in out).
func probeHelper(helper string, out *strings.Builder) error {
	cmd := exec.Command(helper, append([]string{"sandbox-exec", "--probe"}, selfMapArgs()...)...)
	cmd.SysProcAttr = selfMapAttr(&syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID})
	cmd.Stderr = out
	err := cmd.Start()
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		err = <-done
	}
	return err
}

// missingWalls says which walls of the sandbox this machine refuses, in
// the words doctor, the editors and the start notices show, and why.
func missingWalls(c capabilities) (missing []string, why []string) {
	const (
		view = "read-only file system outside the workspace, $TMPDIR and the caches (chmod, chown, utimes and extended attributes there are not refused, /dev/shm is the machine's)"
		prot = "protected paths read-only (.git/hooks, .git/config, darman.json…)"
		pid  = "PID namespace (commands see every process, and the environment of the user's other processes in /proc)"
	)
	if !c.threadNS && !c.userns {
		missing = append(missing, view, prot, pid)
		w := "no user namespace"
		if c.usernsErr != nil {
			w += " (" + c.usernsErr.Error() + ")"
		}
		why = append(why, w+": unprivileged user namespaces may be turned off (sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone, or AppArmor's kernel.apparmor_restrict_unprivileged_userns)")
	} else {
		if !c.view {
			missing = append(missing, view)
			why = append(why, "the kernel's mount API is missing ("+errText(c.viewErr)+"): Linux 5.12 or later is needed")
		}
		if !c.pidOK {
			missing = append(missing, pid)
			if c.view {
				why = append(why, "no PID namespace: "+errText(c.pidErr))
			}
		}
	}
	if !early.FilterKnown() {
		missing = append(missing, "seccomp filter (packet, raw and netlink sockets, mount, bpf, keyctl, process_vm_* and the rest are left to capabilities and Landlock)")
		why = append(why, "darman knows the system calls of amd64 and arm64 only")
	}
	if c.abi < 6 {
		missing = append(missing, "Landlock scoping (abstract Unix sockets and signals to processes outside the sandbox are not refused)")
		why = append(why, fmt.Sprintf("Landlock ABI %d: 6 (Linux 6.12) or later is needed", c.abi))
	}
	return missing, why
}

func errText(err error) string {
	if err == nil {
		return "unknown"
	}
	return err.Error()
}

func joinReasons(r []string) string {
	out := ""
	for i, s := range r {
		if i > 0 {
			out += "; "
		}
		out += s
	}
	return out
}

// nsAttr adds a new user and mount namespace, mapping the caller's own
// user and group, to attr.
func nsAttr(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
	uid, gid := os.Getuid(), os.Getgid()
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	// What a process of a user other than root keeps across execve is
	// its ambient set: without CAP_SYS_ADMIN there, the helper could not
	// mount in the namespace it was made for, and without CAP_SETPCAP not
	// empty the command's bounding set. It drops them before it execve's
	// the command (early.Confine).
	if uid != 0 {
		attr.AmbientCaps = append(attr.AmbientCaps, capSysAdmin, capSetpcap, capSysChroot)
	}
	return attr
}

// selfMapAttr is nsAttr for a process that maps its user and group
// itself (early.MapSelf, given selfMapArgs), as one started once darman
// is non-dumpable must when darman is not root: Go's parent-side writes of
// the maps are refused then (see MapSelf). Root's are not: root's
// processes get nsAttr's.
func selfMapAttr(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	if os.Getuid() == 0 {
		return nsAttr(attr)
	}
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
	attr.AmbientCaps = append(attr.AmbientCaps, capSysAdmin, capSetpcap, capSysChroot)
	return attr
}

// selfMapArgs are the arguments that ask a process started with
// selfMapAttr to map its user and group: none for root.
func selfMapArgs() []string {
	if os.Getuid() == 0 {
		return nil
	}
	return []string{strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid())}
}

// wrapOS makes cmd run confined: on a thread of darman's (see
// thread_linux.go) when darman starts it itself and it needs no namespace
// or darman may mount; on a thread of the workspace's namespace holder
// (holder_linux.go) when it needs one and darman may not mount; else
// through the helper. detached says darman does not start cmd itself
// and so cannot give it a namespace: the helper then starts itself again
// in one. root is the workspace's, whose holder starts the command.
func wrapOS(cmd *exec.Cmd, pol Policy, c capabilities, detached bool, dir, root string) error {
	pol.NS = c.userns || c.threadNS
	pol.View = pol.NS && c.view
	if !pol.NS {
		pol.ReadOnly, pol.Pin = nil, nil
	}
	held := pol.NS && !c.threadNS && c.pool != nil
	if c.inThread && !detached && (!pol.NS || c.threadNS || held) {
		if cmd.Err == nil { // else cmd.Start fails with it, running nothing
			m := &inThread{pol: pol, pidns: c.pidns}
			if held {
				m.pool, m.root, m.pidns = c.pool, root, nil
			}
			cmd.Err = m
		}
		return nil
	}
	if detached && pol.NS {
		pol.NS, pol.Reexec, pol.PID = false, true, c.pidOK && c.inThread
	}
	pol.PolicyDir = dir
	arg, err := policyArg(pol)
	if err != nil {
		return err
	}
	path := cmd.Path
	if path == "" && len(cmd.Args) > 0 {
		path = cmd.Args[0]
	}
	cmd.Args = append([]string{c.helper, "sandbox-exec", arg, path}, cmd.Args...)
	cmd.Path = c.helper
	if pol.NS {
		cmd.SysProcAttr = nsAttr(cmd.SysProcAttr)
	}
	return nil
}

// Exec is the helper, "darman sandbox-exec POLICY PATH ARGV...": it
// confines itself by the JSON policy and execve's PATH with ARGV. It
// returns only on failure, with the exit code to use (125 when the
// sandbox could not be set up, 126/127 when PATH could not run); what
// went wrong is written to stderr.
//
// darman seldom gets here: internal/sandbox/early runs the same helper
// from its package initializer, before the rest of darman is initialized.
// This is the way for what that one leaves to darman (a policy asking to
// re-execute in a namespace of its own) and for a process started without
// /proc.
func Exec(args []string, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "--probe" {
		return early.Probe(args[1:])
	}
	if len(args) > 0 && args[0] == early.Hold {
		return hold(args[1:], stderr)
	}
	if len(args) > 0 && args[0] == early.Init {
		return initNS(stderr)
	}
	pol, code, msg := early.Parse(args, true)
	if code != 0 {
		io.WriteString(stderr, msg)
		return code
	}
	if pol.Reexec {
		return reexec(pol, args[1:], stderr)
	}
	// Everything from here to execve happens on this thread: the
	// restrictions are the thread's, and execve keeps them.
	runtime.LockOSThread()
	code, msg = early.Run(pol, args[1], args[2:])
	io.WriteString(stderr, msg)
	return code
}

// reexec confines a command for a caller that could not (the editor's
// terminal): as darman confines its own (reexecAsDarman), in a PID
// namespace of its own, where one can be made; else by running the helper
// again in a user and mount namespace of its own. It passes signals on,
// and ends as the command ends. When no namespace can be made, the
// command runs without the read-only paths, which it says on stderr.
func reexec(pol Policy, rest []string, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "darman sandbox-exec: %v\n", err)
		return 125
	}
	pol.Reexec, pol.NS = false, true
	if code, ok := reexecAsDarman(self, pol, rest, stderr); ok {
		return code
	}
	start := func(pol Policy, ns bool) (*exec.Cmd, error) {
		arg, err := policyArg(pol)
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(self, append([]string{"sandbox-exec", arg}, rest...)...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if ns {
			cmd.SysProcAttr = nsAttr(nil)
		}
		return cmd, cmd.Start()
	}
	cmd, err := start(pol, true)
	if err != nil || cmd == nil {
		fmt.Fprintf(stderr, "darman sandbox-exec: no user namespace here (%v): the protected paths are not read-only for this command\n", err)
		pol.NS, pol.ReadOnly, pol.Pin = false, nil, nil
		if cmd, err = start(pol, false); err != nil || cmd == nil {
			fmt.Fprintf(stderr, "darman sandbox-exec: %v\n", err)
			return 125
		}
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	signal.Stop(sigs)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		signal.Reset(ws.Signal())
		syscall.Kill(os.Getpid(), ws.Signal())
		return 128 + int(ws.Signal())
	}
	if err != nil && cmd.ProcessState == nil {
		return 125
	}
	return cmd.ProcessState.ExitCode()
}

// reexecAsDarman starts the command (rest: its path and argv) as darman
// starts its own: darman's probe (its record included) said in the policy
// what this machine allows (reexecCaps), and the command is confined on a thread of this process, or of a namespace
// holder, in the PID namespace of an init of its own (pidns_linux.go), so
// that the editor's terminal gets every wall the bash tool's commands
// get. ok is false when no PID namespace can be made here: reexec's
// plainer way then runs it (without one, as Status says).
func reexecAsDarman(self string, pol Policy, rest []string, stderr io.Writer) (code int, ok bool) {
	c, ok := reexecCaps(self, pol)
	defer c.pool.close()
	defer c.pidns.close()
	if !ok || len(rest) < 2 {
		return 0, false
	}
	root := ""
	if len(pol.WriteDirs) > 0 {
		root = pol.WriteDirs[0] // the workspace's (Sandbox.Policy)
	}
	cmd := &exec.Cmd{Path: rest[0], Args: rest[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	// Entered again by the command, in its mount namespace: the writable
	// clone of the workspace there.
	cmd.Dir, _ = os.Getwd()
	pol.NS, pol.Reexec = false, false
	if err := wrapOS(cmd, pol, c, false, pol.PolicyDir, root); err != nil {
		fmt.Fprintf(stderr, "darman sandbox-exec: %v\n", err)
		return 125, true
	}
	if err := startOS(cmd); err != nil {
		fmt.Fprintf(stderr, "darman sandbox-exec: %v\n", err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return 127, true
		}
		return 126, true
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	signal.Stop(sigs)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		// (The init and holder see this process's end as their
		// socket's, and go.)
		signal.Reset(ws.Signal())
		syscall.Kill(os.Getpid(), ws.Signal())
		return 128 + int(ws.Signal()), true
	}
	if err != nil && cmd.ProcessState == nil {
		return 125, true
	}
	return cmd.ProcessState.ExitCode(), true
}

// reexecCaps are the capabilities the helper confines the command with:
// what darman's probe found (pol.PID, pol.View), checked again only where
// this process's own state matters (its threads', whether it may mount);
// ok is false where the helper cannot do it as darman does.
func reexecCaps(self string, pol Policy) (c capabilities, ok bool) {
	if !pol.PID {
		return c, false
	}
	abi, err := early.ABI()
	if err != nil || abi < 1 {
		return c, false
	}
	c.abi, c.helper, c.userns, c.view = abi, self, true, pol.View
	if c.inThread, _ = inThreadOK(); !c.inThread {
		return c, false
	}
	var viewErr error
	if c.threadNS, viewErr = threadMountNS(); c.threadNS {
		if pol.View && viewErr != nil {
			return c, false
		}
		c.pidns = newPidNS(self)
	} else {
		c.pool = newHolderPool(self)
		c.pool.pid = true
	}
	c.pidOK = true
	return c, true
}

// maxInlinePolicy is the largest policy passed as an argument; Linux
// limits one argument to 128 KiB. A larger one (a home with many
// siblings) goes through a file in the sandbox's own temporary directory,
// which commands cannot write, named as "@PATH"; the helper removes it
// once read.
const maxInlinePolicy = 32 << 10

func policyArg(pol Policy) (string, error) {
	js, err := json.Marshal(pol)
	if err != nil {
		return "", err
	}
	if len(js) <= maxInlinePolicy || pol.PolicyDir == "" {
		return string(js), nil
	}
	f, err := os.CreateTemp(pol.PolicyDir, "policy-*.json")
	if err != nil {
		return "", fmt.Errorf("write the sandbox policy: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(js); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write the sandbox policy: %w", err)
	}
	return "@" + f.Name(), nil
}
