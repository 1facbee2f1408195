package config

import (
	"path/filepath"
	"testing"
)

// The OS-specific defaults, checked on any OS by naming the OS.
func TestPlatformDirs(t *testing.T) {
	env := map[string]string{
		"HOME":         "/home/u",
		"USERPROFILE":  `C:\Users\u`,
		"APPDATA":      `C:\Users\u\AppData\Roaming`,
		"LOCALAPPDATA": `C:\Users\u\AppData\Local`,
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		goos, user, data string
	}{
		{"linux", filepath.Join("/home/u", ".config", "darman"), filepath.Join("/home/u", ".local", "share", "darman")},
		{"freebsd", filepath.Join("/home/u", ".config", "darman"), filepath.Join("/home/u", ".local", "share", "darman")},
		{"darwin", filepath.Join("/home/u", "Library", "Application Support", "darman"), filepath.Join("/home/u", "Library", "Application Support", "darman")},
		{"windows", filepath.Join(`C:\Users\u\AppData\Roaming`, "darman"), filepath.Join(`C:\Users\u\AppData\Local`, "darman")},
	}
	for _, tt := range tests {
		d := dirs{goos: tt.goos, lookup: lookup}
		if got, err := d.user(); err != nil || got != tt.user {
			t.Errorf("%s: user dir = %q, %v; want %q", tt.goos, got, err, tt.user)
		}
		if got, err := d.data(); err != nil || got != tt.data {
			t.Errorf("%s: data dir = %q, %v; want %q", tt.goos, got, err, tt.data)
		}
	}

	env["XDG_CONFIG_HOME"] = "/xdg/config"
	env["XDG_DATA_HOME"] = "/xdg/data"
	linux := dirs{goos: "linux", lookup: lookup}
	if got, _ := linux.user(); got != filepath.Join("/xdg/config", "darman") {
		t.Errorf("linux with XDG_CONFIG_HOME: user dir = %q", got)
	}
	if got, _ := linux.data(); got != filepath.Join("/xdg/data", "darman") {
		t.Errorf("linux with XDG_DATA_HOME: data dir = %q", got)
	}
	// XDG variables are a Linux and BSD convention only.
	if got, _ := (dirs{goos: "darwin", lookup: lookup}).data(); got != filepath.Join("/home/u", "Library", "Application Support", "darman") {
		t.Errorf("darwin ignores XDG_DATA_HOME: data dir = %q", got)
	}

	none := dirs{goos: "windows", lookup: func(string) (string, bool) { return "", false }}
	if _, err := none.data(); err == nil || err.Error() != "cannot find the local data directory: LOCALAPPDATA is not set" {
		t.Errorf("windows without LOCALAPPDATA: err = %v", err)
	}
}
