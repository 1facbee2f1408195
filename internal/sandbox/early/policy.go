package early

import "unicode/utf8"

// Policy is what one command may do, as absolute paths. darman hands it to
// the helper as JSON (encoding/json, by these tags) in an argument, and
// the macOS Seatbelt profile is generated from it; internal/sandbox calls
// it sandbox.Policy.
type Policy struct {
	// ReadDirs are trees the command may read and execute from.
	ReadDirs []string `json:"r,omitempty"`
	// ReadFiles are single files it may read.
	ReadFiles []string `json:"rf,omitempty"`
	// WriteDirs are trees it may read, write, create in and remove from.
	WriteDirs []string `json:"w,omitempty"`
	// WriteFiles are single files it may read and write.
	WriteFiles []string `json:"wf,omitempty"`
	// Devices are device files (or directories of them) it may read,
	// write and ioctl.
	Devices []string `json:"dev,omitempty"`
	// ReadOnly are existing paths inside the write trees that stay
	// read-only (bind-mounted read-only over themselves on Linux).
	ReadOnly []string `json:"ro,omitempty"`
	// Pin are existing directories that are made mount points so that
	// they cannot be renamed away (and replaced by ones without the
	// read-only paths).
	Pin []string `json:"pin,omitempty"`
	// Network lets the command use the network.
	Network bool `json:"net,omitempty"`
	// UnixSockets lets it create Unix domain sockets where Landlock cannot
	// confine them.
	UnixSockets bool `json:"unix,omitempty"`
	// Home is the directory whose content is readable only where listed.
	Home string `json:"home,omitempty"`
	// NS says the helper runs in a user and mount namespace of its own, in
	// which it may mount (set by the Linux wrapper, never by a caller).
	NS bool `json:"ns,omitempty"`
	// View, with NS, makes the whole file system read-only in that
	// namespace but for WriteDirs and WriteFiles, and gives the command a
	// /dev/shm of its own (set by the Linux wrapper where the kernel has
	// the mount API it needs, Linux 5.12).
	View bool `json:"view,omitempty"`
	// Reexec says the helper was started by someone who could not give it
	// a namespace (the editor's terminal): it starts itself again in one.
	Reexec bool `json:"reexec,omitempty"`
	// PID, with Reexec, says darman's probe found that commands can run in
	// a PID namespace of their own here: the helper confines the command
	// as darman does, in one (set by the Linux wrapper).
	PID bool `json:"pid,omitempty"`
	// PolicyDir is where a policy too long for an argument is written
	// (the sandbox's own temporary directory).
	PolicyDir string `json:"pd,omitempty"`
}

// PathUnixABI is the first Landlock ABI that confines connect(2) to
// pathname Unix sockets.
const PathUnixABI = 9

// Decode reads the JSON encoding/json makes of a Policy: one object of the
// keys above, each once at most, with no others. It is the helper's
// decoder, so that the helper needs neither encoding/json nor reflection:
// the strings of the arrays are slices of js where they hold no escapes.
func Decode(js string) (Policy, error) {
	d := decoder{s: js}
	var p Policy
	d.ws()
	if !d.eat('{') {
		return Policy{}, d.fail("the policy is not a JSON object")
	}
	var seen uint32
	for first := true; ; first = false {
		d.ws()
		if d.eat('}') {
			break
		}
		if !first && !d.eat(',') {
			return Policy{}, d.fail("expected , or } in the policy object")
		}
		d.ws()
		key, ok := d.str()
		if !ok {
			return Policy{}, d.fail("expected a key in the policy object")
		}
		d.ws()
		if !d.eat(':') {
			return Policy{}, d.fail("expected : after the key " + quote(key))
		}
		d.ws()
		bit, list, flag, text := p.field(key)
		if bit == 0 {
			return Policy{}, d.fail("unknown key " + quote(key))
		}
		if seen&bit != 0 {
			return Policy{}, d.fail("the key " + quote(key) + " is given twice")
		}
		seen |= bit
		switch {
		case list != nil:
			if *list, ok = d.strs(); !ok {
				return Policy{}, d.fail("the value of " + quote(key) + " is not an array of strings")
			}
		case flag != nil:
			if *flag, ok = d.boolean(); !ok {
				return Policy{}, d.fail("the value of " + quote(key) + " is not true or false")
			}
		default:
			if *text, ok = d.str(); !ok {
				return Policy{}, d.fail("the value of " + quote(key) + " is not a string")
			}
		}
	}
	d.ws()
	if d.i != len(d.s) {
		return Policy{}, d.fail("text after the policy object")
	}
	return p, nil
}

// field returns where key's value goes: one of list, flag and text, and
// a bit of its own; bit 0 for a key that is not the policy's.
func (p *Policy) field(key string) (bit uint32, list *[]string, flag *bool, text *string) {
	switch key {
	case "r":
		return 1 << 0, &p.ReadDirs, nil, nil
	case "rf":
		return 1 << 1, &p.ReadFiles, nil, nil
	case "w":
		return 1 << 2, &p.WriteDirs, nil, nil
	case "wf":
		return 1 << 3, &p.WriteFiles, nil, nil
	case "dev":
		return 1 << 4, &p.Devices, nil, nil
	case "ro":
		return 1 << 5, &p.ReadOnly, nil, nil
	case "pin":
		return 1 << 6, &p.Pin, nil, nil
	case "net":
		return 1 << 7, nil, &p.Network, nil
	case "unix":
		return 1 << 8, nil, &p.UnixSockets, nil
	case "home":
		return 1 << 9, nil, nil, &p.Home
	case "ns":
		return 1 << 10, nil, &p.NS, nil
	case "reexec":
		return 1 << 11, nil, &p.Reexec, nil
	case "pd":
		return 1 << 12, nil, nil, &p.PolicyDir
	case "view":
		return 1 << 13, nil, &p.View, nil
	case "pid":
		return 1 << 14, nil, &p.PID, nil
	}
	return 0, nil, nil, nil
}

// decoder is a cursor over the policy's JSON.
type decoder struct {
	s string
	i int
}

// decodeError is what Decode returns: what was wrong, and where.
type decodeError struct {
	msg string
	at  int
}

func (e *decodeError) Error() string { return e.msg + " (at byte " + itoa(e.at) + ")" }

func (d *decoder) fail(msg string) error { return &decodeError{msg, d.i} }

func (d *decoder) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) eat(c byte) bool {
	if d.i < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *decoder) lit(word string) bool {
	if len(d.s)-d.i >= len(word) && d.s[d.i:d.i+len(word)] == word {
		d.i += len(word)
		return true
	}
	return false
}

func (d *decoder) boolean() (bool, bool) {
	switch {
	case d.lit("true"):
		return true, true
	case d.lit("false"):
		return false, true
	}
	return false, false
}

// strs reads an array of strings; null is none.
func (d *decoder) strs() ([]string, bool) {
	if d.lit("null") {
		return nil, true
	}
	if !d.eat('[') {
		return nil, false
	}
	d.ws()
	if d.eat(']') {
		return []string{}, true
	}
	// Most lists are short; count the strings first for one allocation.
	out := make([]string, 0, d.count())
	for {
		d.ws()
		s, ok := d.str()
		if !ok {
			return nil, false
		}
		out = append(out, s)
		d.ws()
		if d.eat(']') {
			return out, true
		}
		if !d.eat(',') {
			return nil, false
		}
	}
}

// count is how many strings the array at the cursor holds, roughly (the
// capacity to make): its commas outside strings, plus one.
func (d *decoder) count() int {
	n, in := 1, false
	for j := d.i; j < len(d.s); j++ {
		switch c := d.s[j]; {
		case in && c == '\\':
			j++
		case c == '"':
			in = !in
		case !in && c == ',':
			n++
		case !in && c == ']':
			return n
		}
	}
	return n
}

// str reads a string: a slice of the input when it holds no escape.
func (d *decoder) str() (string, bool) {
	if !d.eat('"') {
		return "", false
	}
	start := d.i
	for d.i < len(d.s) {
		switch c := d.s[d.i]; {
		case c == '"':
			d.i++
			return d.s[start : d.i-1], true
		case c == '\\':
			return d.unescape(start)
		case c < 0x20:
			return "", false
		}
		d.i++
	}
	return "", false
}

// unescape reads the rest of a string from its first backslash, the
// string having started at start.
func (d *decoder) unescape(start int) (string, bool) {
	b := make([]byte, 0, d.i-start+16)
	b = append(b, d.s[start:d.i]...)
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			return string(b), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b = append(b, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.s) {
			return "", false
		}
		e := d.s[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", false
			}
			if r >= 0xd800 && r < 0xdc00 {
				// A surrogate pair makes one rune; a lone half is
				// U+FFFD, as encoding/json has it.
				if d.i+1 < len(d.s) && d.s[d.i] == '\\' && d.s[d.i+1] == 'u' {
					save := d.i
					d.i += 2
					lo, ok := d.hex4()
					if ok && lo >= 0xdc00 && lo < 0xe000 {
						r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
					} else {
						d.i = save
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			} else if r >= 0xdc00 && r < 0xe000 {
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", false
		}
	}
	return "", false
}

func (d *decoder) hex4() (rune, bool) {
	if len(d.s)-d.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(d.s[d.i : d.i+4]) {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	d.i += 4
	return r, true
}

// quote is s in double quotes, for messages.
func quote(s string) string { return `"` + s + `"` }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
