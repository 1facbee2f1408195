//go:build windows

package tool_test

import (
	"time"

	"golang.org/x/sys/windows"
)

// cpuTime is the user and kernel time of this process so far (Windows
// does not sum up its children's, so rg's own time is not counted).
func cpuTime() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user)
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration(ticks(kernel)+ticks(user)) * 100
}
