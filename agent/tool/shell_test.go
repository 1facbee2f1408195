package tool

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/permission"
)

// windowsShells is tested here over a made-up Windows machine: the
// variables, what PATH holds and the files that exist.
func TestWindowsShells(t *testing.T) {
	base := map[string]string{"SystemRoot": `C:\Windows`, "ProgramFiles": `C:\Program Files`, "LOCALAPPDATA": `C:\Users\me\AppData\Local`}
	for _, tc := range []struct {
		name  string
		env   map[string]string
		path  map[string]string // name → path on PATH
		files []string
		want  string // the shell's path, or the start of the error
		lang  string
	}{
		{name: "configured", env: map[string]string{GitBashEnv: `D:\tools\Git\bin\bash.exe`}, files: []string{`D:\tools\Git\bin\bash.exe`, `C:\Program Files\Git\bin\bash.exe`}, want: `D:\tools\Git\bin\bash.exe`},
		{name: "configured but missing", env: map[string]string{GitBashEnv: `D:\nope\bash.exe`}, files: []string{`C:\Program Files\Git\bin\bash.exe`}, want: "error: " + GitBashEnv + ` is D:\nope\bash.exe, which does not exist`},
		{name: "beside git on PATH", path: map[string]string{"git.exe": `E:\Git\cmd\git.exe`}, files: []string{`E:\Git\bin\bash.exe`}, want: `E:\Git\bin\bash.exe`},
		{name: "WSL's bash on PATH is not Git's", path: map[string]string{"bash.exe": `C:\WINDOWS\system32\bash.exe`, "powershell.exe": `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`}, want: `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, lang: permission.PowerShell},
		{name: "MSYS bash on PATH", path: map[string]string{"bash.exe": `C:\msys64\usr\bin\bash.exe`}, want: `C:\msys64\usr\bin\bash.exe`},
		{name: "Program Files", files: []string{`C:\Program Files\Git\bin\bash.exe`}, want: `C:\Program Files\Git\bin\bash.exe`},
		{name: "per-user install", files: []string{`C:\Users\me\AppData\Local\Programs\Git\bin\bash.exe`}, want: `C:\Users\me\AppData\Local\Programs\Git\bin\bash.exe`},
		{name: "pwsh before Windows PowerShell", path: map[string]string{"pwsh.exe": `C:\Program Files\PowerShell\7\pwsh.exe`, "powershell.exe": `C:\x\powershell.exe`}, want: `C:\Program Files\PowerShell\7\pwsh.exe`, lang: permission.PowerShell},
		{name: "Windows PowerShell off PATH", files: []string{`C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`}, want: `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, lang: permission.PowerShell},
		{name: "nothing", want: "error: no shell found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string {
				if v, ok := tc.env[k]; ok {
					return v
				}
				return base[k]
			}
			look := func(name string) (string, error) {
				if p, ok := tc.path[name]; ok {
					return p, nil
				}
				return "", errors.New("not found")
			}
			exists := func(p string) bool { return slices.Contains(tc.files, p) || slices.Contains(mapValues(tc.path), p) }
			sh, err := windowsShells(getenv, look, exists)
			got := sh.path
			if err != nil {
				got = "error: " + err.Error()
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("shell = %q, want %q", got, tc.want)
			}
			if err == nil && sh.lang != tc.lang {
				t.Errorf("language = %q, want %q", sh.lang, tc.lang)
			}
			if err == nil {
				argv := sh.argv("go test ./...")
				if argv[len(argv)-1] != "go test ./..." || (tc.lang == "" && argv[1] != "-c") {
					t.Errorf("argv = %q", argv)
				}
			}
		})
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
