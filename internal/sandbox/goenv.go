package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// goCacheDirs are Go's build and module caches (GOCACHE, GOMODCACHE) as
// `go env` prints them for the go command at gobin, read the way the go
// command reads its settings (cmd/go/internal/cfg): the environment, then
// the go env file (GOENV, else <config dir>/go/env, which `go env -w`
// writes), then $GOROOT/go.env, then the defaults. No go command runs:
// that cost milliseconds at every darman start, and the go command starts
// a telemetry process of its own that outlived darman and went on writing
// in the user's home.
func goCacheDirs(gobin string) []string {
	get, goroot := goSettings(gobin)
	var dirs []string
	switch cache := get("GOCACHE"); cache {
	case "off":
	case "":
		if d, err := os.UserCacheDir(); err == nil {
			dirs = append(dirs, filepath.Join(d, "go-build"))
		}
	default:
		dirs = append(dirs, cache)
	}
	if mod := get("GOMODCACHE"); mod != "" {
		dirs = append(dirs, mod)
	} else if gopath := firstGOPATH(get("GOPATH"), goroot); gopath != "" {
		dirs = append(dirs, filepath.Join(gopath, "pkg", "mod"))
	}
	out := dirs[:0]
	for _, d := range dirs {
		if filepath.IsAbs(d) { // the go command refuses a relative one
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

// goSettings returns the lookup of the go command's settings (a variable
// set in the environment wins over the go env file, which wins over
// GOROOT's go.env) and its GOROOT.
func goSettings(gobin string) (get func(string) string, goroot string) {
	var user map[string]string
	if file := os.Getenv("GOENV"); file != "" && file != "off" {
		user = readGoEnvFile(file)
	} else if file == "" {
		if d, err := os.UserConfigDir(); err == nil && d != "" {
			user = readGoEnvFile(filepath.Join(d, "go", "env"))
		}
	}
	goroot = os.Getenv("GOROOT")
	if goroot == "" {
		goroot = user["GOROOT"]
	}
	if goroot == "" {
		if p, err := filepath.EvalSymlinks(gobin); err == nil {
			gobin = p
		}
		goroot = filepath.Dir(filepath.Dir(gobin))
	}
	root := readGoEnvFile(filepath.Join(goroot, "go.env"))
	return func(key string) string {
		if v := os.Getenv(key); v != "" {
			return v
		}
		if v, ok := user[key]; ok {
			return v
		}
		return root[key]
	}, goroot
}

// readGoEnvFile reads a go env file as the go command does: KEY=VALUE
// lines whose key starts with a capital letter; anything else (comments)
// is skipped.
func readGoEnvFile(path string) map[string]string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		key, val, ok := strings.Cut(line, "=")
		if !ok || key == "" || key[0] < 'A' || key[0] > 'Z' {
			continue
		}
		out[key] = val
	}
	return out
}

// firstGOPATH is the first entry of GOPATH, or its default ($HOME/go,
// unless that is GOROOT).
func firstGOPATH(gopath, goroot string) string {
	if gopath != "" {
		return filepath.SplitList(gopath)[0]
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	def := filepath.Join(home, "go")
	if filepath.Clean(def) == filepath.Clean(goroot) {
		return ""
	}
	return def
}
