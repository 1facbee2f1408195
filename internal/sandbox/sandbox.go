package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Mode says what happens when the OS offers no sandbox.
type Mode string

const (
	// Auto sandboxes when the OS can, and runs unsandboxed (saying so)
	// when it cannot. The default.
	Auto Mode = "auto"
	// Required refuses to run commands without a sandbox.
	Required Mode = "required"
	// Off runs every command unsandboxed.
	Off Mode = "off"
)

// ErrUnavailable is what Wrap returns, wrapped, in Required mode when the
// OS offers no sandbox.
var ErrUnavailable = errors.New("no OS sandbox is available and sandbox.mode is \"required\"")

// Options configure a Sandbox. The zero value is Auto mode with the network
// off and the default caches and protected paths.
type Options struct {
	// Mode is Auto, Required or Off; "" means Auto.
	Mode Mode
	// Network lets every command use the network; false keeps it off
	// unless a Request asks for it.
	Network bool
	// UnixSockets lets commands create Unix domain sockets on kernels
	// whose Landlock cannot confine pathname sockets (ABI below 9); false
	// refuses them there.
	UnixSockets bool
	// WritableDirs are more directories commands may write (and read),
	// absolute.
	WritableDirs []string
	// ReadableDirs are more directories (or files) inside the home
	// directory commands may read, absolute.
	ReadableDirs []string
	// Caches are more cache directories commands may write, besides the
	// built-in ones (DefaultCaches).
	Caches []string
	// Protected returns the protected paths of the workspace at root,
	// absolute, whether they exist or not: the files that make other
	// programs run (agent/permission.ProtectedPaths, the one list, which
	// darman passes). Commands may neither change those that exist nor
	// create those that do not (see Sandbox.missingProtected). Nil
	// protects only Protect.
	Protected func(root string) []string
	// Protect are more paths, relative to the workspace root (globs
	// allowed), kept read-only for commands.
	Protect []string
	// Home is the home directory whose secrets are kept unreadable; ""
	// means $HOME.
	Home string
	// Helper is the executable that understands "sandbox-exec" (darman
	// itself); "" means os.Executable().
	Helper string
	// TempRoot is where the per-session temporary directories are made; ""
	// means os.TempDir().
	TempRoot string
	// ProbeRecord is the file where a probe that found every wall is
	// recorded for the next darman on the same boot, kernel, settings and
	// binary (Linux); "" probes every time.
	ProbeRecord string
	// FreshProbe probes even when ProbeRecord holds a record, and records
	// what it found (or deletes the record): darman doctor's.
	FreshProbe bool
}

// Request is what Wrap needs to know about one command.
type Request struct {
	// Root is the workspace root, absolute.
	Root string
	// Session names the per-session temporary directory; "" shares one.
	Session string
	// Network turns the network on for this command.
	Network bool
}

// Status is what the sandbox does on this machine, for doctor, the
// editors and the once-per-session notice.
type Status struct {
	Mode Mode `json:"mode"`
	// Kind is "landlock", "seatbelt", or "" when commands run unsandboxed.
	Kind string `json:"kind,omitempty"`
	// ABI is the kernel's Landlock ABI version (0 elsewhere).
	ABI int `json:"abi,omitempty"`
	// Network is whether commands may use the network by default.
	Network bool `json:"network"`
	// ProtectedReadOnly is whether the protected paths are made read-only
	// for commands (Linux: needs user namespaces).
	ProtectedReadOnly bool `json:"protectedReadOnly"`
	// ReadOnlyView is whether everything but the writable directories is
	// a read-only mount for commands, and PIDNamespace whether they run
	// in a PID namespace with a /proc of its own (Linux).
	ReadOnlyView bool `json:"readOnlyView,omitempty"`
	PIDNamespace bool `json:"pidNamespace,omitempty"`
	// Reason says why commands run unsandboxed, or what part of the
	// sandbox is missing; "" when everything is on.
	Reason string `json:"reason,omitempty"`
	// Missing are the walls of the sandbox this machine refuses, each
	// with why (Linux: the read-only view, the protected paths, the PID
	// namespace, the seccomp filter, Landlock's scoping). In Required
	// mode any of them keeps every command from running.
	Missing []string `json:"missing,omitempty"`
}

// Active reports whether commands run sandboxed.
func (s Status) Active() bool { return s.Kind != "" }

// Summary is the status in one line.
func (s Status) Summary() string {
	if !s.Active() {
		if s.Mode == Required {
			return "sandbox: unavailable (" + s.Reason + "); sandbox.mode is \"required\", so commands are refused"
		}
		return "sandbox: off — commands run unsandboxed (" + s.Reason + ")"
	}
	var b strings.Builder
	b.WriteString("sandbox: " + s.Kind)
	if s.ABI > 0 {
		fmt.Fprintf(&b, " (ABI %d)", s.ABI)
	}
	b.WriteString(": writes to the workspace, its temp dir and the toolchain caches; secrets in home unreadable; network ")
	if s.Network {
		b.WriteString("on")
	} else {
		b.WriteString("off")
	}
	if s.ProtectedReadOnly {
		b.WriteString("; protected paths read-only")
	}
	if s.ReadOnlyView {
		b.WriteString("; the rest of the file system read-only")
	}
	if s.PIDNamespace {
		b.WriteString("; a PID namespace of their own")
	}
	if len(s.Missing) > 0 {
		b.WriteString("; missing walls: " + strings.Join(s.Missing, "; "))
	}
	if s.Reason != "" {
		b.WriteString(" (" + s.Reason + ")")
	}
	return b.String()
}

// Sandbox confines commands. It is safe for concurrent use; Close removes
// the temporary directories it made.
type Sandbox struct {
	opts Options

	once   sync.Once
	status Status
	caps   capabilities
	caches []string

	mu      sync.Mutex
	tempDir string            // the root of the per-session dirs, made on first use
	temps   map[string]string // session → its temp dir
	cached  static            // see Sandbox.static
	// placeholders are the entries made in git directories so that
	// commands cannot create them (see placeholder), as made.
	placeholders map[string]os.FileInfo
}

// New returns a Sandbox configured by opts. It probes the OS on first use.
func New(opts Options) *Sandbox {
	if opts.Mode == "" {
		opts.Mode = Auto
	}
	if opts.Home == "" {
		opts.Home, _ = os.UserHomeDir()
	}
	if opts.Home != "" {
		opts.Home = filepath.Clean(opts.Home)
	}
	if opts.TempRoot == "" {
		opts.TempRoot = os.TempDir()
	}
	return &Sandbox{opts: opts, temps: map[string]string{}, placeholders: map[string]os.FileInfo{}}
}

// capabilities are what the probe found.
type capabilities struct {
	abi    int  // Landlock ABI, 0 when absent
	userns bool // a user + mount namespace can be made
	// inThread: commands needing no namespace can be confined on a thread
	// of darman's rather than through the helper (Linux).
	inThread bool
	// threadNS: such a thread may also take a mount namespace of its own
	// for the protected paths (darman has CAP_SYS_ADMIN).
	threadNS bool
	// view: the kernel's mount API can make the read-only view of the
	// file system in those namespaces (viewErr: why not).
	view    bool
	viewErr error
	// usernsErr: why no user namespace could be made (nil when one
	// can).
	usernsErr error
	// pidOK: commands can run in a PID namespace with a /proc of its
	// own (pidErr: why not); pidns is darman's init of it, where darman
	// may mount (a holder has one of its own).
	pidOK  bool
	pidErr error
	pidns  *pidNS
	// pool, where darman may not mount but a user namespace can be made,
	// starts those commands in the namespace holders (Linux).
	pool   *holderPool
	helper string
}

func (s *Sandbox) probe() {
	s.once.Do(func() {
		s.status = Status{Mode: s.opts.Mode, Network: s.opts.Network}
		if s.opts.Mode == Off {
			s.status.Reason = "sandbox.mode is \"off\""
			return
		}
		helper := s.opts.Helper
		if helper == "" {
			exe, err := os.Executable()
			if err != nil {
				s.status.Reason = "cannot find darman's own executable: " + err.Error()
				return
			}
			helper = exe
		}
		s.caps, s.status.Reason = probeOS(helper, s.opts.ProbeRecord, s.opts.FreshProbe)
		s.caps.helper = helper
		s.status.Kind = kindOf(s.caps)
		s.status.ABI = max(s.caps.abi, 0)
		s.status.ProtectedReadOnly = s.status.Kind == "seatbelt" || (s.status.Kind == "landlock" && (s.caps.userns || s.caps.threadNS))
		s.caches = append(DefaultCaches(s.opts.Home), s.opts.Caches...)
		if s.status.Kind == "landlock" {
			s.status.ReadOnlyView, s.status.PIDNamespace = s.caps.view, s.caps.pidOK
			var why []string
			s.status.Missing, why = missingWalls(s.caps)
			if len(why) > 0 {
				s.status.Reason = joinReason(s.status.Reason, strings.Join(why, "; "))
			}
		}
		if s.opts.Mode == Required && len(s.status.Missing) > 0 {
			// All of it or nothing: no command runs with a wall missing.
			s.status.Kind, s.status.ProtectedReadOnly, s.status.ReadOnlyView, s.status.PIDNamespace = "", false, false, false
			s.status.Reason = joinWalls(s.status.Reason, s.status.Missing)
			s.caps.pidns.close()
		}
	})
}

// Status probes the OS (once) and says what the sandbox does.
func (s *Sandbox) Status() Status {
	s.probe()
	return s.status
}

// Wrap prepares cmd, not started yet, to run confined by req's policy, and
// sets TMPDIR in cmd.Env to the session's temporary directory; start it
// with Start. Where the command is confined through a helper (macOS's
// sandbox-exec; on Linux darman's "sandbox-exec", for a command that
// needs a namespace of its own), cmd.Path and cmd.Args become the
// helper's. Where darman confines the thread that starts it instead (the
// common case on Linux), cmd.Err holds what Start needs, and cmd.Start
// refuses to run it unconfined. Without a sandbox it leaves cmd as it is,
// or, in Required mode, returns an error wrapping ErrUnavailable.
func (s *Sandbox) Wrap(cmd *exec.Cmd, req Request) error {
	st := s.Status()
	if !st.Active() {
		if s.opts.Mode == Required {
			return fmt.Errorf("%w: %s", ErrUnavailable, st.Reason)
		}
		return nil
	}
	tmp, err := s.sessionTemp(req.Session)
	if err != nil {
		return fmt.Errorf("make the sandbox's temp dir: %w", err)
	}
	pol := s.Policy(req, tmp)
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	env = setEnv(env, "TMPDIR", tmp)
	env = setEnv(env, "DARMAN_SANDBOX", st.Kind)
	if !pol.Network {
		env = setEnv(env, "DARMAN_SANDBOX_NETWORK_DISABLED", "1")
	}
	cmd.Env = env
	return wrapOS(cmd, pol, s.caps, false, s.root(), realOr(req.Root))
}

// Start starts cmd, prepared by Wrap (or not: then it is cmd.Start). A
// command confined in darman's process is started from a thread of its
// own that is confined first and thrown away afterwards; with a
// parent-death signal set (SysProcAttr.Pdeathsig), that thread lives until
// the command has exited, since the kernel sends the signal when the
// thread that started it ends.
func Start(cmd *exec.Cmd) error { return startOS(cmd) }

// CommandLine returns argv (a program found on PATH and its arguments)
// wrapped to run confined by req's policy in a process darman does not
// start itself, such as the editor's terminal, and the environment
// variables to set for it. Without a sandbox it returns argv as it is and
// no variables, or, in Required mode, an error wrapping ErrUnavailable.
func (s *Sandbox) CommandLine(argv []string, req Request) ([]string, map[string]string, error) {
	if len(argv) == 0 {
		return nil, nil, errors.New("sandbox: empty command line")
	}
	st := s.Status()
	if !st.Active() {
		if s.opts.Mode == Required {
			return nil, nil, fmt.Errorf("%w: %s", ErrUnavailable, st.Reason)
		}
		return argv, nil, nil
	}
	tmp, err := s.sessionTemp(req.Session)
	if err != nil {
		return nil, nil, fmt.Errorf("make the sandbox's temp dir: %w", err)
	}
	pol := s.Policy(req, tmp)
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, nil, err
	}
	cmd := &exec.Cmd{Path: path, Args: argv}
	if err := wrapOS(cmd, pol, s.caps, true, s.root(), realOr(req.Root)); err != nil {
		return nil, nil, err
	}
	env := map[string]string{"TMPDIR": tmp, "DARMAN_SANDBOX": st.Kind}
	if !pol.Network {
		env["DARMAN_SANDBOX_NETWORK_DISABLED"] = "1"
	}
	return append([]string{cmd.Path}, cmd.Args[1:]...), env, nil
}

// sessionTemp returns the session's temporary directory, made on first use.
func (s *Sandbox) sessionTemp(session string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.temps[session]; ok {
		if _, err := os.Stat(d); err == nil {
			return d, nil
		}
	}
	if s.tempDir == "" {
		d, err := os.MkdirTemp(s.opts.TempRoot, "darman-sandbox-")
		if err != nil {
			return "", err
		}
		s.tempDir = d
	}
	name := "shared"
	if session != "" {
		name = sanitize(session)
	}
	d := filepath.Join(s.tempDir, name)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", err
	}
	// The real path, so that rules and TMPDIR agree through links.
	if real, err := filepath.EvalSymlinks(d); err == nil {
		d = real
	}
	s.temps[session] = d
	return d, nil
}

// root is the sandbox's own temporary directory (made by sessionTemp).
func (s *Sandbox) root() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tempDir
}

// Alive returns how many processes the sandbox's commands left that can
// still run: commands running now, background jobs, and what any of them
// started, a process that left its command's session (setsid, a double
// fork) included. ok is false where the sandbox cannot tell: commands run
// in no PID namespace of its own (no sandbox, macOS, a kernel that
// refuses one), or its init did not answer. When n is 0, nothing a
// sandboxed command started can write anything any more.
func (s *Sandbox) Alive() (n int, ok bool) {
	if s == nil || !s.Status().PIDNamespace {
		return 0, false
	}
	return s.caps.alive()
}

// Close kills what the sandbox's commands left running in its PID
// namespaces (setsid escapees included) and returns once none of it can
// run, removes the temporary directories the sandbox made, and lets its
// namespace holders exit.
func (s *Sandbox) Close() error {
	s.caps.pool.close()
	s.caps.pidns.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removePlaceholders()
	if s.tempDir == "" {
		return nil
	}
	err := os.RemoveAll(s.tempDir)
	s.tempDir, s.temps = "", map[string]string{}
	return err
}

// joinWalls is reason followed by the missing walls.
func joinWalls(reason string, missing []string) string {
	return joinReason("missing walls: "+strings.Join(missing, "; "), reason)
}

func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// setEnv sets name=value in env, replacing earlier settings of name.
func setEnv(env []string, name, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == name {
			continue
		}
		out = append(out, kv)
	}
	return append(out, name+"="+value)
}
