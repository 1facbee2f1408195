package config

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// dirs finds the per-user directories from an environment, so tests can
// supply their own.
type dirs struct {
	goos   string
	lookup func(string) (string, bool)
}

func platformDirs(lookup func(string) (string, bool)) dirs {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	return dirs{goos: runtime.GOOS, lookup: lookup}
}

// env returns the variable's value; an empty value counts as unset.
func (d dirs) env(name string) (string, bool) {
	v, ok := d.lookup(name)
	return v, ok && v != ""
}

var errNoHome = errors.New("cannot find the home directory: HOME is not set")

func (d dirs) home() (string, error) {
	name := "HOME"
	if d.goos == "windows" {
		name = "USERPROFILE"
	}
	if h, ok := d.env(name); ok {
		return h, nil
	}
	if d.goos == "windows" {
		return "", errors.New("cannot find the home directory: USERPROFILE is not set")
	}
	return "", errNoHome
}

// xdg returns an XDG base directory variable when it holds an absolute path
// (the XDG spec says relative values are to be ignored), else home/fallback.
func (d dirs) xdg(name, fallback string) (string, error) {
	if v, ok := d.env(name); ok && filepath.IsAbs(v) {
		return v, nil
	}
	h, err := d.home()
	if err != nil {
		return "", err
	}
	return filepath.Join(h, fallback), nil
}

// user returns the directory that holds the user's config.json.
func (d dirs) user() (string, error) {
	switch d.goos {
	case "darwin", "ios":
		h, err := d.home()
		if err != nil {
			return "", err
		}
		return filepath.Join(h, "Library", "Application Support", "darman"), nil
	case "windows":
		if v, ok := d.env("APPDATA"); ok {
			return filepath.Join(v, "darman"), nil
		}
		return "", errors.New("cannot find the user config directory: APPDATA is not set")
	default:
		base, err := d.xdg("XDG_CONFIG_HOME", ".config")
		if err != nil {
			return "", err
		}
		return filepath.Join(base, "darman"), nil
	}
}

// data returns the default data directory.
func (d dirs) data() (string, error) {
	switch d.goos {
	case "darwin", "ios":
		h, err := d.home()
		if err != nil {
			return "", err
		}
		return filepath.Join(h, "Library", "Application Support", "darman"), nil
	case "windows":
		if v, ok := d.env("LOCALAPPDATA"); ok {
			return filepath.Join(v, "darman"), nil
		}
		return "", errors.New("cannot find the local data directory: LOCALAPPDATA is not set")
	default:
		base, err := d.xdg("XDG_DATA_HOME", filepath.Join(".local", "share"))
		if err != nil {
			return "", err
		}
		return filepath.Join(base, "darman"), nil
	}
}

// resolve makes a path from a config value absolute: "~" and "~/..." are
// under the home directory, other relative paths under base.
func (d dirs) resolve(base, p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") || (d.goos == "windows" && strings.HasPrefix(p, `~\`)) {
		h, err := d.home()
		if err != nil {
			return "", err
		}
		return filepath.Join(h, p[1:]), nil
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	return filepath.Join(base, p), nil
}

// UserDir returns the directory that holds the user's config.json (and
// other per-user files such as commands): $XDG_CONFIG_HOME/darman or
// ~/.config/darman on Linux and BSD, the OS user config directory plus
// "darman" on macOS and Windows. lookupEnv nil means os.LookupEnv.
func UserDir(lookupEnv func(string) (string, bool)) (string, error) {
	return platformDirs(lookupEnv).user()
}
