//go:build windows

package child

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows a child's group is a Job Object: the child starts suspended,
// joins a job of its own, then runs, so every process it starts is in the
// job too. The job is made with kill-on-close: darman holds its only
// handle, so when darman exits or dies, Windows ends whatever is left in
// it. Windows has no SIGTERM for console programs outside a shared
// console: stopping a group closes its stdin (Process.Stop's first step),
// then terminates the job with exit code KilledExitCode.

// KilledExitCode is the exit code of a process darman killed on Windows
// (the shells' 128+SIGKILL), which ExitCode reports as "killed".
const KilledExitCode = 137

// group is a child's Job Object and the PID of its leader.
type group = *job

type job struct {
	pid    int
	mu     sync.Mutex
	handle windows.Handle // 0 once closed
}

// jobs maps the leader's PID to its job while the job is open, so that
// GroupAlive, given a PID, can answer for the whole tree.
var jobs sync.Map // int → *job

// prepare has cmd start suspended, so that it joins its job before it can
// start anything, with a hidden console of its own (CREATE_NO_WINDOW) and
// in a process group of its own. Sharing darman's console, the Windows
// form of the terminal setsid keeps from children on Unix, a child could
// read the console's input, write input into it (answer `darman run`'s
// permission prompt) and would get the user's Ctrl-C. A hidden console
// rather than none (DETACHED_PROCESS), because the console programs a
// shell runs inherit it: with none, each would open a console window.
// Standard streams are the pipes Start made, whatever the console.
func prepare(cmd *exec.Cmd, _ bool) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED | windows.CREATE_NO_WINDOW | windows.CREATE_NEW_PROCESS_GROUP
}

// attach makes the started (suspended) child's job and lets it run.
func attach(cmd *exec.Cmd) (group, error) {
	pid := cmd.Process.Pid
	h, err := newJob()
	if err != nil {
		return nil, err
	}
	ph, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("open the child process: %w", err)
	}
	err = windows.AssignProcessToJobObject(h, ph)
	windows.CloseHandle(ph)
	if err != nil {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("assign the child to a job object: %w", err)
	}
	j := &job{pid: pid, handle: h}
	// The jobs map holds the job, and its handle open, until terminate or
	// ended closes it; a job whose owner forgot it while its tree runs is
	// closed by Windows when darman exits, and kill-on-close ends the
	// tree. Nothing else closes the handle (no runtime cleanup): a second
	// CloseHandle could close another job's handle, since Windows gives
	// closed handles' numbers out again.
	jobs.Store(pid, j)
	if err := resume(uint32(pid)); err != nil {
		j.terminate()
		return nil, fmt.Errorf("resume the child: %w", err)
	}
	return j, nil
}

// newJob makes a job object that kills its processes when its last handle
// closes.
func newJob() (windows.Handle, error) {
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("create a job object: %w", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(h)
		return 0, fmt.Errorf("make the job object kill on close: %w", err)
	}
	return h, nil
}

// resume resumes the threads of the suspended process pid (its main
// thread: a process started suspended has no other).
func resume(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	var te windows.ThreadEntry32
	te.Size = uint32(unsafe.Sizeof(te))
	resumed := false
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return err
		}
		resumed = true
	}
	if !resumed {
		return errors.New("no thread of the process was found")
	}
	return nil
}

func (j *job) id() int { return j.pid }

// alive reports whether the job still holds a running process.
func (j *job) alive() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.aliveLocked()
}

func (j *job) aliveLocked() bool {
	if j.handle == 0 {
		return false
	}
	n, err := activeProcesses(j.handle)
	return err == nil && n > 0
}

// basicAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type basicAccounting struct {
	TotalUserTime, TotalKernelTime, ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime int64
	TotalPageFaultCount, TotalProcesses, ActiveProcesses, TotalTerminatedProcesses     uint32
}

func activeProcesses(h windows.Handle) (uint32, error) {
	var info basicAccounting
	err := windows.QueryInformationJobObject(h, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	return info.ActiveProcesses, err
}

// terminate ends every process of the job and closes it.
func (j *job) terminate() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.handle == 0 {
		return
	}
	if j.aliveLocked() {
		windows.TerminateJobObject(j.handle, KilledExitCode)
		deadline := time.Now().Add(2 * time.Second)
		for j.aliveLocked() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	// Closing kills what TerminateJobObject could not reach yet.
	j.closeLocked()
}

// ended reports whether the job has no process left, and closes it once
// it has (nothing can join an empty job), so that a child whose tree
// exited on its own holds no handle until darman exits. A job it cannot
// query is left open: closing it would kill what it holds.
func (j *job) ended() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.handle == 0 {
		return true
	}
	if n, err := activeProcesses(j.handle); err != nil || n > 0 {
		return false
	}
	j.closeLocked()
	return true
}

// closeLocked closes the job's handle, once, and forgets the job.
func (j *job) closeLocked() {
	if j.handle == 0 {
		return
	}
	jobs.CompareAndDelete(j.pid, j)
	windows.CloseHandle(j.handle)
	j.handle = 0
}

// stop terminates the job (there is no gentler signal to send: the stdin
// step came first) and waits, up to two seconds, for the leader's reaper.
func (j *job) stop(exited <-chan struct{}, grace time.Duration) {
	j.terminate()
	if exited != nil {
		select {
		case <-exited:
		case <-time.After(2 * time.Second):
		}
	}
}

// exitSignal names how darman's kill ended a process: "killed" for the
// exit code TerminateJobObject gave it, "" otherwise.
func exitSignal(st *os.ProcessState) string {
	if st.ExitCode() == KilledExitCode {
		return "killed"
	}
	return ""
}

// GroupAlive reports whether any process of the job led by pid is still
// running; for a PID darman holds no job for, whether that process is.
func GroupAlive(pid int) bool {
	if j, ok := jobs.Load(pid); ok {
		return j.(*job).alive()
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	return code == 259 // STILL_ACTIVE
}
