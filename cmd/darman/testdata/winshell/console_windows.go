package main

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// console says which console this process would read and write as
// CONIN$ and CONOUT$: "darman's" when its parent (darman, which runs
// winshell as its bash) is attached to the same one, "its own" when not,
// "none" when it has none.
func console() string {
	in, err := os.OpenFile("CONIN$", os.O_RDWR, 0)
	if err != nil {
		return "console: none (CONIN$: " + err.Error() + ")"
	}
	in.Close()
	list := make([]uint32, 64)
	proc := syscall.NewLazyDLL("kernel32.dll").NewProc("GetConsoleProcessList")
	n, _, err := proc.Call(uintptr(unsafe.Pointer(&list[0])), uintptr(len(list)))
	if n == 0 {
		return "console: unknown (GetConsoleProcessList: " + err.Error() + ")"
	}
	parent := uint32(os.Getppid())
	for _, pid := range list[:min(int(n), len(list))] {
		if pid == parent {
			return fmt.Sprintf("console: darman's (%d processes attached)", n)
		}
	}
	return fmt.Sprintf("console: its own (%d processes attached)", n)
}
