package early

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// same decodes js with Decode and with encoding/json and wants the same
// policy.
func same(t *testing.T, js string) {
	t.Helper()
	got, err := Decode(js)
	if err != nil {
		t.Fatalf("Decode(%s): %v", js, err)
	}
	var want Policy
	if err := json.Unmarshal([]byte(js), &want); err != nil {
		t.Fatalf("json.Unmarshal(%s): %v", js, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode(%s)\n = %#v\nwant %#v", js, got, want)
	}
}

// TestDecodeReadsWhatDarmanWrites: every field, and paths with every kind
// of character encoding/json escapes, come back as encoding/json reads
// them.
func TestDecodeReadsWhatDarmanWrites(t *testing.T) {
	odd := []string{
		`/a "quoted" dir`, `/back\slash`, "/tab\there", "/new\nline", "/ctl\x01\x1f", "/del\x7f",
		"/html<&>", "/é/ü/日本/🙂", "/bad\xffutf8", "/sep\u2028\u2029", "", "/", `\`, `"`,
	}
	full := Policy{
		ReadDirs: odd, ReadFiles: []string{"/etc/hosts"}, WriteDirs: []string{"/ws", "/tmp/x"},
		WriteFiles: []string{"/ws/.git/packed-refs"}, Devices: []string{"/dev/null", "/dev/pts"},
		ReadOnly: []string{"/ws/.git/config"}, Pin: []string{"/ws/.git"},
		Network: true, UnixSockets: true, Home: "/home/u ser", NS: true, Reexec: true, PolicyDir: "/tmp/d",
	}
	for _, p := range []Policy{{}, full, {Network: true}, {ReadDirs: []string{"/only"}}} {
		js, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		same(t, string(js))
		indented, _ := json.MarshalIndent(p, " ", "\t")
		same(t, string(indented))
	}
	// Hand-written forms encoding/json reads too: null, empty arrays,
	// false, surrogate pairs and lone halves, escaped slashes.
	for _, js := range []string{
		`{"r":null,"w":[],"net":false,"home":""}`,
		`{"r":["\ud83d\ude42","\ud83d","\ude42","\ud83dx","\ud83d\u0041"],"pd":"a\/b"}`,
		`{"r":["\u00e9\u00E9\b\f\r"]}`,
		" \t\r\n{ \"r\" : [ \"a\" , \"b\" ] , \"ns\" : true } \n",
	} {
		same(t, js)
	}
}

// TestDecodeRefusesWhatIsNotAPolicy: malformed or foreign input is an
// error saying what is wrong, never a panic or a half-read policy.
func TestDecodeRefusesWhatIsNotAPolicy(t *testing.T) {
	for js, want := range map[string]string{
		``:                        "not a JSON object",
		`[]`:                      "not a JSON object",
		`{"r":["a"]`:              "expected , or }",
		`{"r":["a"]} x`:           "text after",
		`{"x":1}`:                 `unknown key "x"`,
		`{"R":["a"]}`:             `unknown key "R"`,
		`{"r":["a"],"r":["b"]}`:   "given twice",
		`{"r":"a"}`:               "not an array of strings",
		`{"r":[1]}`:               "not an array of strings",
		`{"r":["a",]}`:            "not an array of strings",
		`{"net":1}`:               "not true or false",
		`{"home":["a"]}`:          "not a string",
		`{"r":["a` + "\n" + `"]}`: "not an array of strings",
		`{"r":["\x"]}`:            "not an array of strings",
		`{"r":["\u12"]}`:          "not an array of strings",
		`{"r":["\`:                "not an array of strings",
		`{"r" ["a"]}`:             "expected :",
		`{,}`:                     "expected a key",
	} {
		_, err := Decode(js)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Decode(%q) = %v, want an error with %q", js, err, want)
		}
	}
}

// FuzzDecode: any input decodes or fails without panicking, and whatever
// policy encoding/json writes from the fuzzed strings reads back the same.
func FuzzDecode(f *testing.F) {
	f.Add(`{"r":["/a"],"net":true}`, "/x", "/y")
	f.Add(`{"r":["\ud83d"]}`, "\xff", "\"\\")
	f.Fuzz(func(t *testing.T, js, a, b string) {
		Decode(js)
		p := Policy{ReadDirs: []string{a, b}, Home: a, WriteFiles: []string{b}, PolicyDir: b}
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		same(t, string(out))
	})
}

// BenchmarkDecode is the helper's share of reading a typical policy.
func BenchmarkDecode(b *testing.B) {
	var p Policy
	for _, d := range []string{"bin", "boot", "dev", "etc", "home", "lib", "lib64", "media", "mnt", "opt", "proc", "run", "sbin", "srv", "sys", "tmp", "usr", "var"} {
		p.ReadDirs = append(p.ReadDirs, "/"+d)
	}
	p.WriteDirs = []string{"/home/u/src/project", "/tmp/darman-sandbox-1/shared", "/home/u/.cache/go-build", "/home/u/go/pkg/mod"}
	p.Devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm"}
	p.Home = "/home/u"
	js, _ := json.Marshal(p)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(string(js)); err != nil {
			b.Fatal(err)
		}
	}
}
