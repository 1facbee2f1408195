package sandbox

import (
	"fmt"
	"strings"
)

// SeatbeltProfile generates the macOS sandbox-exec (Seatbelt) profile for
// pol: deny by default; read everything but home, and in home only the
// listed directories; write the write trees and devices, not the
// read-only paths; network only when pol.Network; no Unix sockets to
// outside the write trees. In SBPL a later rule wins over an earlier one,
// which is what the deny-then-allow order relies on.
//
// darman cannot run it on Linux; its tests check the text it makes.
func SeatbeltProfile(pol Policy) string {
	var b strings.Builder
	b.WriteString(`(version 1)
(deny default)
(allow process-exec process-fork)
(allow signal (target same-sandbox))
(allow sysctl-read)
(allow mach-lookup)
(allow ipc-posix-shm)
(allow ipc-posix-sem)
(allow iokit-open)
(allow file-ioctl (literal "/dev/tty") (literal "/dev/null"))
(allow pseudo-tty)
(allow file-read-metadata)
(allow file-read* (subpath "/"))
`)
	if pol.Home != "" && pol.Home != "/" {
		fmt.Fprintf(&b, "(deny file-read* (subpath %s))\n", sbQuote(pol.Home))
	}
	if len(pol.ReadDirs)+len(pol.ReadFiles) > 0 {
		b.WriteString("(allow file-read*")
		for _, d := range pol.ReadDirs {
			if pol.Home != "" && (d == pol.Home || strings.HasPrefix(d, pol.Home+"/")) {
				fmt.Fprintf(&b, "\n  (subpath %s)", sbQuote(d))
			}
		}
		for _, f := range pol.ReadFiles {
			fmt.Fprintf(&b, "\n  (literal %s)", sbQuote(f))
		}
		b.WriteString(")\n")
	}
	b.WriteString("(allow file-read* file-write*")
	for _, d := range pol.WriteDirs {
		fmt.Fprintf(&b, "\n  (subpath %s)", sbQuote(d))
	}
	for _, f := range pol.WriteFiles {
		fmt.Fprintf(&b, "\n  (literal %s)", sbQuote(f))
	}
	for _, d := range pol.Devices {
		fmt.Fprintf(&b, "\n  (subpath %s)", sbQuote(d))
	}
	b.WriteString(")\n")
	if len(pol.ReadOnly) > 0 {
		b.WriteString("(deny file-write*")
		for _, p := range pol.ReadOnly {
			fmt.Fprintf(&b, "\n  (subpath %s)", sbQuote(p))
		}
		b.WriteString(")\n")
	}
	if pol.Network {
		b.WriteString("(allow network*)\n")
	} else if len(pol.WriteDirs) > 0 {
		// Unix sockets inside the write trees (a test's own server) work;
		// the user's agents' sockets elsewhere stay closed.
		b.WriteString("(allow network* (remote unix-socket")
		for _, d := range pol.WriteDirs {
			fmt.Fprintf(&b, " (subpath %s)", sbQuote(d))
		}
		b.WriteString("))\n(allow network-bind (local unix-socket")
		for _, d := range pol.WriteDirs {
			fmt.Fprintf(&b, " (subpath %s)", sbQuote(d))
		}
		b.WriteString("))\n")
	}
	return b.String()
}

// sbQuote quotes s as an SBPL string.
func sbQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
