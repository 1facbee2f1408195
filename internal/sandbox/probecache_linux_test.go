//go:build linux

package sandbox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// recordChild is wallsChild whose child keeps its probe's record in
// record, and first writes one for itself when forge is set; its helper
// is helper.
func recordChild(t *testing.T, mode Mode, uid int, helper, record string, forge bool, filter []syscall.SockFilter) (wallsReport, string) {
	t.Helper()
	cmd, dir := wallsChild(t, mode, uid)
	spec, _ := json.Marshal(map[string]any{"Mode": string(mode), "Dir": dir, "Record": record, "Forge": forge, "Helper": helper})
	for i, v := range cmd.Env {
		if strings.HasPrefix(v, wallsChildEnv+"=") {
			cmd.Env[i] = wallsChildEnv + "=" + string(spec)
		}
	}
	if len(filter) == 0 {
		out, err := cmd.CombinedOutput()
		return wallsOf(t, out, err), dir
	}
	cmd.Err = &filtered{filter}
	out, err := startFiltered(cmd)
	return wallsOf(t, out, err), dir
}

// TestProbeRecord: a probe that found every wall is recorded, and the
// next darman of the same user on the same kernel takes the walls from
// the record (the same status, the command confined as before). A
// process the kernel gives fewer walls to (user namespaces refused, as
// with user.max_user_namespaces=0) does not believe it and names what is
// missing; a record that claims walls the process cannot have (written
// for it by someone else) fails closed: the command does not run, and the
// record is deleted.
func TestProbeRecord(t *testing.T) {
	newFixture(t, Options{}) // skips where there is no sandbox
	if runtime.GOARCH != "amd64" {
		t.Skip("the filter that refuses user namespaces knows amd64's system calls")
	}
	if os.Geteuid() != 0 {
		t.Skip("running the child as another user needs root")
	}
	for _, uid := range []int{0, 65534} {
		t.Run(map[int]string{0: "root", 65534: "nobody"}[uid], func(t *testing.T) {
			shared := t.TempDir()
			os.Chmod(filepath.Dir(shared), 0o755)
			os.Chmod(shared, 0o755)
			os.Lchown(shared, uid, uid)
			record := filepath.Join(shared, "sandbox-probe.json")
			// The helper: a script that logs how it is started, then
			// runs a copy of the test binary.
			exe, _ := os.Executable()
			copyFile(t, exe, filepath.Join(shared, "sandbox.test"))
			started := filepath.Join(shared, "started.log")
			helper := filepath.Join(shared, "helper")
			write(t, helper, "#!/bin/sh\necho \"$1 $2\" >> "+started+"\nexec "+filepath.Join(shared, "sandbox.test")+" \"$@\"\n")
			os.Chmod(helper, 0o755)
			write(t, started, "")
			for _, f := range []string{shared, helper, started, filepath.Join(shared, "sandbox.test")} {
				os.Lchown(f, uid, uid)
			}
			probes := func() int {
				b, _ := os.ReadFile(started)
				n := strings.Count(string(b), "sandbox-exec --probe")
				write(t, started, "")
				return n
			}
			fresh, _ := recordChild(t, Auto, uid, helper, record, false, nil)
			if len(fresh.Status.Missing) > 0 {
				if _, err := os.Stat(record); err == nil {
					t.Errorf("a probe that found walls missing was recorded: %+v", fresh.Status)
				}
				t.Skipf("this machine lacks walls: %s", fresh.Summary)
			}
			if _, err := os.Stat(record); err != nil {
				t.Fatalf("the probe that found every wall was not recorded: %v", err)
			}
			if n := probes(); n != 1 {
				t.Errorf("the first darman started %d probes, not 1", n)
			}
			again, dir := recordChild(t, Auto, uid, helper, record, false, nil)
			if n := probes(); n != 0 {
				t.Errorf("with the record, darman started %d probes", n)
			}
			if !reflect.DeepEqual(again.Status, fresh.Status) || again.Summary != fresh.Summary {
				t.Errorf("from the record: %+v\nprobed: %+v", again.Status, fresh.Status)
			}
			if !strings.Contains(again.Output, "RAN") || !strings.Contains(again.Output, "Read-only file system") {
				t.Errorf("from the record, the command did not run confined: %q", again.Output)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "ws", "marker")); string(b) != "ran\n" {
				t.Errorf("from the record: marker = %q", b)
			}
			if uid == 0 {
				return // root needs no user namespace: the filter takes no wall
			}
			// (Its probe cannot start: the clone into a user namespace
			// is refused.)
			without, _ := recordChild(t, Auto, uid, helper, record, false, noUserNS)
			if !strings.Contains(strings.Join(without.Status.Missing, "\n"), "PID namespace") || without.Status.ReadOnlyView {
				t.Errorf("without user namespaces, the record was believed: %+v", without.Status)
			}
			if _, err := os.Stat(record); err != nil {
				t.Errorf("the record of the unfiltered processes went: %v", err)
			}
			forged, dir := recordChild(t, Required, uid, helper, record, true, noUserNS)
			if strings.Contains(forged.Output, "RAN") {
				t.Errorf("a forged record let the command run without its walls: %+v", forged)
			}
			if _, err := os.Stat(filepath.Join(dir, "ws", "marker")); err == nil {
				t.Error("forged record: the command ran")
			}
			if _, err := os.Stat(record); err == nil {
				t.Error("the record that did not hold is still there")
			}
			t.Logf("forged record: %s; the command: %s %q", forged.Summary, forged.WrapErr, forged.Output)
		})
	}
}
