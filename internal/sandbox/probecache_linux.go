//go:build linux

package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// The probe's record.
//
// The probe starts darman twice more (the helper in a user and PID
// namespace, then the commands' PID namespace init), which is most of a
// headless turn's start. What it finds changes only with the kernel, its
// settings and what darman's process may do, so a probe that found every
// wall is recorded, under a key made of all of that: the boot, the
// kernel's release and build, the namespace and Landlock sysctls, the
// process's user, groups, capabilities, no_new_privs, seccomp filters,
// its user, mount and PID namespaces, its security label, and the helper
// executable's file. A later darman whose key is the same skips the two
// processes; any difference probes again. The init is then started when
// the first command needs it.
//
// Only a probe that found everything is recorded: a record never says a
// wall is missing, so a record someone else wrote can never take a wall
// away. A record that claims a wall the machine no longer gives fails
// closed: a command that needs the helper's namespaces or the init fails
// to start ("the sandbox could not be set up"), never runs without them,
// and that failure deletes the record, so the next darman probes again.

// probeRecordVersion changes when what a record means changes.
const probeRecordVersion = 1

type probeRecord struct {
	Version int    `json:"version"`
	Key     string `json:"key"`
}

// probeKey is the key a record is kept under, or "" when a part of it
// cannot be read (then nothing is recorded or believed).
func probeKey(helper string) string {
	h := sha256.New()
	fmt.Fprintf(h, "v%d\n", probeRecordVersion)
	for _, f := range []string{
		"/proc/sys/kernel/random/boot_id",
		"/proc/sys/kernel/osrelease",
		"/proc/sys/kernel/version",
	} {
		b, err := os.ReadFile(f)
		if err != nil {
			return ""
		}
		fmt.Fprintf(h, "%s=%s\n", f, bytes.TrimSpace(b))
	}
	// Settings that may be absent on a kernel: absent is part of the key.
	for _, f := range []string{
		"/proc/sys/user/max_user_namespaces",
		"/proc/sys/user/max_mnt_namespaces",
		"/proc/sys/user/max_pid_namespaces",
		"/proc/sys/kernel/unprivileged_userns_clone",
		"/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
		"/proc/sys/kernel/apparmor_restrict_unprivileged_unconfined",
		"/sys/kernel/security/lsm",
		"/proc/self/attr/current",
	} {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(h, "%s!\n", f)
			continue
		}
		fmt.Fprintf(h, "%s=%s\n", f, bytes.TrimSpace(b))
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	seen := 0
	for line := range bytes.SplitSeq(status, []byte("\n")) {
		name, _, _ := bytes.Cut(line, []byte(":"))
		switch string(name) {
		case "Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp", "Seccomp_filters":
			h.Write(line)
			h.Write([]byte("\n"))
			seen++
		}
	}
	if seen < 9 {
		return ""
	}
	for _, ns := range []string{"user", "mnt", "pid"} {
		target, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			return ""
		}
		fmt.Fprintf(h, "ns %s\n", target)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(helper, &st); err != nil {
		return ""
	}
	fmt.Fprintf(h, "helper %s %d %d %d %d.%d %d.%d\n", helper, st.Dev, st.Ino, st.Size,
		st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
	return hex.EncodeToString(h.Sum(nil))
}

// probeRecorded says whether file holds a record under key. The file must
// be a regular file of this user's, writable by no one else.
func probeRecorded(file, key string) bool {
	if file == "" || key == "" {
		return false
	}
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o022 != 0 || fi.Size() > 4<<10 {
		return false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
		return false
	}
	var rec probeRecord
	if err := json.NewDecoder(f).Decode(&rec); err != nil {
		return false
	}
	return rec.Version == probeRecordVersion && rec.Key == key
}

// recordProbe writes a record under key; failing to is only slower the
// next time.
func recordProbe(file, key string) {
	if file == "" || key == "" {
		return
	}
	dir := filepath.Dir(file)
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	b, _ := json.Marshal(probeRecord{Version: probeRecordVersion, Key: key})
	tmp, err := os.CreateTemp(dir, ".sandbox-probe-*")
	if err != nil {
		return
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}

// forgetProbe deletes the record: what it claimed did not hold.
func forgetProbe(file string) {
	if file != "" {
		os.Remove(file)
	}
}
