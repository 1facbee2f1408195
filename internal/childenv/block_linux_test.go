//go:build linux

package childenv_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/darman-dev/darman/internal/childenv"
)

// TestMain lets the test binary be the process whose block is wiped.
func TestMain(m *testing.M) {
	if os.Getenv("CHILDENV_SCRUB_CHILD") == "1" {
		scrubChild()
		return
	}
	os.Exit(m.Run())
}

// scrubChild wipes its block by a policy with a provider key and an
// exclusion, checks that its own environment is whole, says so, and
// waits for its stdin to close.
func scrubChild() {
	names, err := childenv.Scrub(childenv.Policy{Secrets: []string{"value-of-a-provider-key"}, Exclude: []string{"ZZ_EXCLUDED"}, Keep: []string{"GITHUB_TOKEN"}})
	if err != nil {
		os.Stdout.WriteString("ERROR " + err.Error() + "\n")
		os.Exit(1)
	}
	again, _ := childenv.Scrub(childenv.Policy{})
	for _, want := range []string{"ZZ_API_KEY=key-material-1", "GITHUB_TOKEN=key-material-2", "ZZ_PROVIDER=value-of-a-provider-key",
		"ZZ_EXCLUDED=excluded-value", "PLAIN=plain-value", "EMPTY_SECRET="} {
		if !slices.Contains(os.Environ(), want) {
			os.Stdout.WriteString("LOST " + want + "\n")
			os.Exit(1)
		}
	}
	os.Stdout.WriteString("READY " + strings.Join(names, ",") + " again=" + strconv.Itoa(len(again)) + "\n")
	bufio.NewReader(os.Stdin).ReadString('\n')
}

// TestScrubWipesWhatOthersRead: another process reading the wiped
// process's /proc/PID/environ finds the names of its secrets but not
// their values, and the rest as it was; the process itself still has
// every value.
func TestScrubWipesWhatOthersRead(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = []string{"CHILDENV_SCRUB_CHILD=1", "ZZ_API_KEY=key-material-1", "GITHUB_TOKEN=key-material-2",
		"ZZ_PROVIDER=value-of-a-provider-key", "ZZ_EXCLUDED=excluded-value", "PLAIN=plain-value", "EMPTY_SECRET="}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if want := "READY ZZ_API_KEY,GITHUB_TOKEN,ZZ_PROVIDER,ZZ_EXCLUDED again=0\n"; line != want {
		t.Fatalf("the child said %q, want %q", line, want)
	}
	block, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"key-material", "value-of-a-provider-key", "excluded-value"} {
		if bytes.Contains(block, []byte(secret)) {
			t.Errorf("%s is still in the block: %q", secret, block)
		}
	}
	var entries []string
	for _, e := range bytes.Split(block, []byte{0}) {
		if len(e) > 0 {
			entries = append(entries, string(e))
		}
	}
	want := []string{"CHILDENV_SCRUB_CHILD=1", "ZZ_API_KEY=", "GITHUB_TOKEN=", "ZZ_PROVIDER=", "ZZ_EXCLUDED=", "PLAIN=plain-value", "EMPTY_SECRET="}
	if !slices.Equal(entries, want) {
		t.Errorf("the block reads %q, want %q", entries, want)
	}
}
