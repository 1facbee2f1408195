package startup

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	// darman's start-up is the initializers of a few hundred packages,
	// the provider SDKs and the store among them; linking these gives the
	// test binary such a start-up, so the pages it leaves resident are
	// mostly ones the program does not use again, as in darman.
	_ "github.com/anthropics/anthropic-sdk-go/v2"
	_ "github.com/dgraph-io/badger/v4"
	_ "github.com/openai/openai-go/v3"
)

// residentExeKiB sums the resident KiB of this process's read-only
// mappings of its own executable, from /proc/self/smaps.
func residentExeKiB(t *testing.T) int {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	total, counting := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-") && len(fields[1]) == 4:
			counting = len(fields) >= 6 && fields[5] == exe && !strings.Contains(fields[1], "w")
		case counting && len(fields) == 3 && fields[0] == "Rss:":
			kb, _ := strconv.Atoi(fields[1])
			total += kb
		}
	}
	return total
}

// dropStartupPages unmaps the pages start-up touched in the binary's
// read-only mappings, and the program goes on running: its code and data
// come back from the page cache as they are used.
func TestDropStartupPages(t *testing.T) {
	before := residentExeKiB(t)
	if before < 1024 {
		t.Skipf("only %d KiB of the test binary is resident: nothing to measure the drop against", before)
	}
	if err := dropStartupPages(); err != nil {
		t.Fatal(err)
	}
	after := residentExeKiB(t)
	if after >= before/2 {
		t.Errorf("resident pages of the executable: %d KiB before, %d KiB after; want them mostly given back", before, after)
	}
	// Code and read-only data the drop unmapped still run: they fault
	// back in from the page cache (a wrong drop would crash here).
	if got := strings.Repeat(strconv.Itoa(42), 2); got != "4242" {
		t.Errorf("after the drop: %q", got)
	}
	t.Logf("resident pages of the test binary: %d KiB → %d KiB", before, after)
}
