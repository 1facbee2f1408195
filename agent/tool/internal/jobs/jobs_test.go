//go:build unix

package jobs_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/tool/internal/jobs"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/testenv"
)

// A command's stdout and stderr reach the sink in one stream, and its exit
// code is kept; its group leaves the registry once it is over.
func TestProcRunsToTheEnd(t *testing.T) {
	reg := &child.Registry{}
	out := &testenv.Buffer{}
	p, err := jobs.StartProc(exec.Command("sh", "-c", "echo out; echo err >&2; exit 3"), "test", out, reg)
	if err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	if !p.WaitRead(5 * time.Second) {
		t.Fatal("the output did not end")
	}
	p.CloseOut()
	if got := out.String(); got != "out\nerr\n" {
		t.Errorf("output %q", got)
	}
	if code, sig := p.ExitCode(); code != 3 || sig != "" {
		t.Errorf("exit %d %q; want 3", code, sig)
	}
	p.Stop(time.Second)
	if live := reg.Live(); len(live) != 0 {
		t.Errorf("still recorded: %+v", live)
	}
}

// A job that runs is reported running until bash_kill's Kill stops its
// whole group; Close stops the rest and takes no new jobs.
func TestJobsKillAndClose(t *testing.T) {
	reg := &child.Registry{}
	j := jobs.New(nil)
	a, err := j.Start(exec.Command("sh", "-c", "echo started; sleep 60 & wait"), "a", reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := j.Start(exec.Command("sleep", "60"), "b", reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID() != "job-1" || b.ID() != "job-2" || a.Command() != "a" {
		t.Errorf("jobs %s (%s), %s", a.ID(), a.Command(), b.ID())
	}
	if got, err := j.Get(" job-1 "); err != nil || got != a {
		t.Errorf("Get job-1: %v, %v", got, err)
	}
	if _, err := j.Get("job-9"); err == nil || !strings.Contains(err.Error(), "job-1, job-2") {
		t.Errorf("Get job-9: %v; want the list of jobs", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if data, _ := a.Take(); len(data) > 0 {
			if string(data) != "started\n" {
				t.Errorf("job-1's output %q", data)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("job-1 wrote nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if status, running, _ := a.Status(); !running || status != "running" {
		t.Errorf("job-1 is %q", status)
	}
	a.Kill()
	if status, running, _ := a.Status(); running || status != "stopped by bash_kill" {
		t.Errorf("job-1 after Kill is %q (running %v)", status, running)
	}
	j.Close()
	if status, running, _ := b.Status(); running {
		t.Errorf("job-2 after Close is %q", status)
	}
	if live := reg.Live(); len(live) != 0 {
		t.Errorf("groups left after Close: %+v", live)
	}
	if _, err := j.Start(exec.Command("true"), "late", reg, nil); err == nil {
		t.Error("a closed Jobs started a job")
	}
}

// Output past the cap is shown as its head and its tail, with how much was
// left out between them, and all of it is in the saved file.
func TestCaptureKeepsHeadAndTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	var progressed int
	c := jobs.NewCapture(func() (*os.File, error) { return os.Create(path) }, func(string) { progressed++ })
	var all strings.Builder
	for i := range 5000 {
		line := fmt.Sprintf("line %04d\n", i)
		all.WriteString(line)
		c.Write([]byte(line))
	}
	text := c.Text()
	if !c.Truncated() || !strings.HasPrefix(text, "line 0000\n") || !strings.HasSuffix(text, "line 4999\n") || !strings.Contains(text, "bytes omitted") {
		t.Errorf("truncated %v, text:\n%.200s\n…\n%s", c.Truncated(), text, text[max(0, len(text)-200):])
	}
	if len(text) > jobs.OutputMax+100 {
		t.Errorf("the text is %d bytes; the cap is %d", len(text), jobs.OutputMax)
	}
	saved, err := c.Finish()
	if err != nil || saved != path {
		t.Fatalf("Finish: %q, %v", saved, err)
	}
	if b, _ := os.ReadFile(path); string(b) != all.String() {
		t.Errorf("the saved file holds %d bytes of %d", len(b), all.Len())
	}
	if progressed != 5000 {
		t.Errorf("progress heard %d writes", progressed)
	}

	small := jobs.NewCapture(nil, nil)
	small.Write([]byte("short\n"))
	if small.Text() != "short\n" || small.Truncated() {
		t.Errorf("a short output: %q, truncated %v", small.Text(), small.Truncated())
	}
	if saved, err := small.Finish(); saved != "" || err != nil {
		t.Errorf("a short output was saved: %q, %v", saved, err)
	}
}
