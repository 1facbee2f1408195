package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGoCacheDirsAgreeWithGoEnv holds goCacheDirs to what the real go
// command prints for the same settings, in the environment, the go env
// file and GOENV's.
func TestGoCacheDirsAgreeWithGoEnv(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	home := t.TempDir()
	config := filepath.Join(home, ".config")
	// The go command's telemetry off, or it leaves a process behind that
	// writes in home after the test.
	mode := filepath.Join(config, "go", "telemetry", "mode")
	os.MkdirAll(filepath.Dir(mode), 0o755)
	os.WriteFile(mode, []byte("off"), 0o644)
	userFile := filepath.Join(config, "go", "env")
	other := filepath.Join(home, "other.env")
	os.WriteFile(other, []byte("GOMODCACHE="+filepath.Join(home, "from-goenv", "mod")+"\n"), 0o644)

	for _, c := range []struct {
		name string
		env  map[string]string
		file string // the user's go env file
	}{
		{name: "defaults"},
		{name: "XDG_CACHE_HOME", env: map[string]string{"XDG_CACHE_HOME": filepath.Join(home, "xdg-cache")}},
		{name: "go env -w", file: "# a comment\nGOCACHE=" + filepath.Join(home, "c") + "\nGOPATH=" + filepath.Join(home, "p1") + string(os.PathListSeparator) + filepath.Join(home, "p2") + "\n"},
		{name: "the environment wins", file: "GOCACHE=" + filepath.Join(home, "c") + "\n",
			env: map[string]string{"GOCACHE": "off", "GOMODCACHE": filepath.Join(home, "m")}},
		{name: "GOPATH in the environment", env: map[string]string{"GOPATH": filepath.Join(home, "gp")}},
		{name: "GOENV", env: map[string]string{"GOENV": other}},
		{name: "GOENV=off", env: map[string]string{"GOENV": "off"}, file: "GOCACHE=" + filepath.Join(home, "ignored") + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV", "GOROOT", "XDG_CACHE_HOME"} {
				t.Setenv(k, c.env[k])
			}
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", config)
			os.Remove(userFile)
			if c.file != "" {
				os.WriteFile(userFile, []byte(c.file), 0o644)
			}
			out, err := exec.Command(gobin, "env", "GOCACHE", "GOMODCACHE").Output()
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if filepath.IsAbs(l) {
					want = append(want, l)
				}
			}
			if got := goCacheDirs(gobin); !slices.Equal(got, want) {
				t.Errorf("goCacheDirs = %q; go env says %q", got, want)
			}
		})
	}
}
