package startup

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// dropStartupPages gives back the pages of darman's own binary that
// starting the process and the agent mapped, and that darman lsp does not
// use while it waits for the editor. Release calls it.
//
// A Go program runs the initializer of every package it links before
// main, and darman links a few hundred (provider SDKs, the store, MCP);
// starting the agent runs much more code once. Each first touch of the
// binary's code or read-only data maps not one page but up to 64 KiB
// around it from the page cache (the kernel's fault-around), so starting
// leaves some 40 MiB of the binary resident in the process, most of it
// not used again: that was most of darman lsp's idle RSS, which editors
// and task managers show next to every language server's. The pages stay
// in the page cache, shared with every darman process; this only removes
// them from this process's mappings, and asks the kernel to map what is
// touched from now on page by page (MADV_RANDOM, which also turns off
// read-ahead for these mappings: if the binary was evicted from the page
// cache, the code of the next turn is read back a page at a time). Only
// mappings of the executable that are not writable and hold no page of
// the process's own (see copied) are touched, so no data is lost: a page
// used again is mapped again from the page cache, a minor fault.
func dropStartupPages() error {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return err
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return err
	}
	defer f.Close()
	type span struct {
		start, end uintptr
		// copied is set when some pages are the process's own copies,
		// counted as Anonymous (a loader's relocations in a RELRO
		// segment): dropping those would lose them, so such a mapping is
		// left alone. (Private_Dirty is no sign: a binary just written
		// is dirty in the page cache.)
		copied bool
	}
	var spans []span
	var cur *span
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-") && len(fields[1]) == 4:
			// 00400000-022ca000 r-xp 00000000 fe:00 10587434   /path/to/darman
			cur = nil
			if len(fields) < 6 || fields[5] != exe || strings.Contains(fields[1], "w") {
				continue
			}
			var s span
			if _, err := fmt.Sscanf(fields[0], "%x-%x", &s.start, &s.end); err != nil {
				return fmt.Errorf("/proc/self/smaps: %q: %w", sc.Text(), err)
			}
			spans = append(spans, s)
			cur = &spans[len(spans)-1]
		case cur != nil && len(fields) == 3 && fields[0] == "Anonymous:" && fields[1] != "0":
			cur.copied = true
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	for _, s := range spans {
		if s.copied {
			continue
		}
		for _, advice := range []uintptr{unix.MADV_RANDOM, unix.MADV_DONTNEED} {
			if _, _, errno := unix.Syscall(unix.SYS_MADVISE, s.start, s.end-s.start, advice); errno != 0 {
				return fmt.Errorf("madvise %x-%x: %w", s.start, s.end, errno)
			}
		}
	}
	return nil
}
