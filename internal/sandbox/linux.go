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
	"strings"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

func kindOf(c capabilities) string {
	if c.abi > 0 {
		return "landlock"
	}
	return ""
}

// probeOS finds the kernel's Landlock ABI and whether the helper can be
// started in a user and mount namespace of its own.
func probeOS(helper string) (capabilities, string) {
	var c capabilities
	abi, err := llsys.LandlockGetABIVersion()
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
	cmd := exec.Command(helper, "sandbox-exec", "--probe")
	cmd.SysProcAttr = nsAttr(nil)
	done := make(chan error, 1)
	if err = cmd.Start(); err == nil {
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			err = <-done
		}
	}
	if err == nil {
		c.userns = true
	} else {
		reasons = append(reasons, "protected paths are not read-only: no user namespace ("+err.Error()+")")
	}
	return c, joinReasons(reasons)
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
	return attr
}

// wrapOS makes cmd run the helper. detached says darman does not start
// cmd itself and so cannot give it a namespace: the helper then starts
// itself again in one.
func wrapOS(cmd *exec.Cmd, pol Policy, c capabilities, detached bool, dir string) error {
	pol.NS = c.userns && len(pol.ReadOnly)+len(pol.Pin) > 0
	if !pol.NS {
		pol.ReadOnly, pol.Pin = nil, nil
	}
	if detached && pol.NS {
		pol.NS, pol.Reexec = false, true
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
func Exec(args []string, stderr io.Writer) int {
	if len(args) == 1 && args[0] == "--probe" {
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			fmt.Fprintf(stderr, "darman sandbox-exec: %v\n", err)
			return 1
		}
		return 0
	}
	if len(args) < 3 {
		fmt.Fprintln(stderr, "darman sandbox-exec: usage: darman sandbox-exec POLICY PATH ARGV... (darman runs this itself)")
		return 125
	}
	var pol Policy
	if err := readPolicyArg(args[0], &pol); err != nil {
		fmt.Fprintf(stderr, "darman sandbox-exec: bad policy: %v\n", err)
		return 125
	}
	if pol.Reexec {
		return reexec(pol, args[1:], stderr)
	}
	// Everything from here to execve happens on this thread: the
	// restrictions are the thread's, and execve keeps them.
	runtime.LockOSThread()
	if err := confine(pol); err != nil {
		fmt.Fprintf(stderr, "darman sandbox-exec: the sandbox could not be set up: %v\n", err)
		return 125
	}
	err := syscall.Exec(args[1], args[2:], os.Environ())
	fmt.Fprintf(stderr, "darman sandbox-exec: run %s: %v\n", args[1], err)
	if errors.Is(err, syscall.ENOENT) {
		return 127
	}
	return 126
}

// confine applies pol to the calling thread.
func confine(pol Policy) error {
	if pol.NS {
		if err := protect(pol); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return fmt.Errorf("the kernel offers no Landlock: %v", err)
	}
	var families []uint32
	if !pol.Network {
		families = append(families, unix.AF_INET, unix.AF_INET6, unix.AF_VSOCK)
	}
	if !pol.UnixSockets && abi < landlockPathUnixABI {
		families = append(families, unix.AF_UNIX)
	}
	if err := installSeccomp(socketFilter(families)); err != nil {
		return fmt.Errorf("install the seccomp filter: %w", err)
	}

	cfg := landlock.V11
	if pol.Network {
		cfg.HandledAccessNet = 0
	}
	cfg = cfg.BestEffort()
	rw := landlock.RWDirs(pol.WriteDirs...).IgnoreIfMissing()
	if abi >= 2 {
		rw = rw.WithRefer()
	}
	var devDirs, devFiles []string
	for _, d := range pol.Devices {
		if isDir(d) {
			devDirs = append(devDirs, d)
		} else {
			devFiles = append(devFiles, d)
		}
	}
	rules := []landlock.Rule{
		landlock.RODirs(pol.ReadDirs...).IgnoreIfMissing(),
		landlock.ROFiles(pol.ReadFiles...).IgnoreIfMissing(),
		rw,
		landlock.RWFiles(pol.WriteFiles...).IgnoreIfMissing(),
		landlock.RWDirs(devDirs...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWFiles(devFiles...).WithIoctlDev().IgnoreIfMissing(),
	}
	if pol.UnixSockets && abi >= landlockPathUnixABI {
		rules = append(rules, landlock.PathAccess(llsys.AccessFSResolveUnix, pol.WriteDirs...).IgnoreIfMissing())
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("build the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("Landlock had nothing to enforce")
	}
	defer unix.Close(fd)
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("enforce the Landlock ruleset: %w", err)
	}
	return nil
}

// protect makes pol's read-only paths read-only and pins its directories,
// in the private mount namespace the helper was started in.
func protect(pol Policy) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	for _, d := range pol.Pin {
		if err := unix.Mount(d, d, "", unix.MS_BIND|unix.MS_REC, ""); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("pin %s: %w", d, err)
		}
	}
	for _, p := range pol.ReadOnly {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // gone since the policy was made
			}
			return fmt.Errorf("bind %s: %w", p, err)
		}
		var st unix.Statfs_t
		if err := unix.Statfs(p, &st); err != nil {
			return fmt.Errorf("statfs %s: %w", p, err)
		}
		// A remount in a user namespace must keep the flags it cannot
		// change (nosuid, nodev, noexec, atime).
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
		for _, f := range [][2]int64{
			{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
			{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
		} {
			if st.Flags&f[0] != 0 {
				flags |= uintptr(f[1])
			}
		}
		if err := unix.Mount("", p, "", flags, ""); err != nil {
			return fmt.Errorf("make %s read-only: %w", p, err)
		}
	}
	return nil
}

// reexec runs the helper again in a user and mount namespace of its own,
// for a caller that could not make one (the editor's terminal), passes
// signals on, and ends as it ends. When no namespace can be made, the
// command runs without the read-only paths, which it says on stderr.
func reexec(pol Policy, rest []string, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "darman sandbox-exec: %v\n", err)
		return 125
	}
	pol.Reexec, pol.NS = false, true
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

func readPolicyArg(arg string, pol *Policy) error {
	js := []byte(arg)
	if path, ok := strings.CutPrefix(arg, "@"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		os.Remove(path)
		js = b
	}
	return json.Unmarshal(js, pol)
}
