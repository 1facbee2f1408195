package editors

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNeovimPlugin installs the plugin the ways docs/editors.md says, in a
// headless Neovim with an empty home: as a native package (a directory
// under pack/*/start on 'packpath', as a plugin manager's checkout is) and
// by 'runtimepath' (lazy.nvim's config and packer's rtp do that). Each
// time the commands exist, require("darman") is the helper with its
// opt-ins, and the old path (darman.lua on package.path) gives the same
// module.
func TestNeovimPlugin(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("Neovim is not installed (apt-get install -y neovim): skipping the plugin's install test")
	}
	plugin, err := filepath.Abs("nvim")
	if err != nil {
		t.Fatal(err)
	}
	check := `lua local ok, err = pcall(function()
  local d = require("darman")
  local caps = d.capabilities()
  package.path = "` + plugin + `/?.lua;" .. package.path
  package.loaded.darman = nil
  local again = require("darman")
  local f = io.open(os.getenv("OUT"), "w")
  f:write(table.concat({
    "start=" .. vim.fn.exists(":DarmanStart"),
    "prompt=" .. vim.fn.exists(":DarmanPrompt"),
    "apply=" .. vim.fn.exists(":DarmanApply"),
    "edits=" .. tostring(caps.experimental.darman.applyEditAndSave),
    "api=" .. type(d.start) .. "," .. type(d.prompt) .. "," .. type(d.apply) .. "," .. type(again.start),
  }, "\n"))
  f:close()
end)
if not ok then io.stderr:write(tostring(err) .. "\n") vim.cmd("cquit 1") end
vim.cmd("qall!")`
	for _, how := range []string{"package", "rtp"} {
		t.Run(how, func(t *testing.T) {
			home := t.TempDir()
			out := filepath.Join(home, "out")
			args := []string{"--headless", "-u", "NORC", "-i", "NONE", "-n"}
			switch how {
			case "package":
				start := filepath.Join(home, "site", "pack", "darman", "start")
				if err := os.MkdirAll(start, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(plugin, filepath.Join(start, "darman")); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--cmd", "set packpath^="+filepath.Join(home, "site"))
			case "rtp":
				args = append(args, "--cmd", "set rtp^="+plugin)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, nvim, append(args, "-c", check)...)
			cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
				"XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_STATE_HOME="+filepath.Join(home, "state"), "OUT="+out)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stderr, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("nvim: %v\n%s", err, stderr.String())
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("nvim wrote nothing: %v\n%s", err, stderr.String())
			}
			if got, want := string(b), "start=2\nprompt=2\napply=2\nedits=true\napi=function,function,function,function"; got != want {
				t.Errorf("Neovim saw\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestEmacsPackage byte-compiles darman.el as package-vc-install does,
// with warnings as errors, reads its package headers with package.el, and
// requires it from load-path.
func TestEmacsPackage(t *testing.T) {
	emacs, err := exec.LookPath("emacs")
	if err != nil {
		t.Skip("Emacs is not installed (apt-get install -y emacs-nox elpa-eglot): skipping the package test")
	}
	src, err := os.ReadFile(filepath.Join("emacs", "darman.el"))
	if err != nil {
		t.Fatal(err)
	}
	// Compiled in a copy: the .elc stays out of the repository.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "darman.el"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// Not emacs -Q: Debian's startup file is what puts eglot on load-path.
		cmd := exec.CommandContext(ctx, emacs, append([]string{"--batch"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("emacs %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := run("--eval", "(setq byte-compile-error-on-warn t)", "-f", "batch-byte-compile", "darman.el"); strings.Contains(out, "Warning") {
		t.Errorf("byte-compiling darman.el warned:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "darman.elc")); err != nil {
		t.Errorf("no darman.elc: %v", err)
	}
	out := run("-l", "package", "-l", "lisp-mnt", "--eval", `(with-temp-buffer
  (insert-file-contents "darman.el")
  (let ((d (package-buffer-info)))
    (princ (format "\nname=%s\nversion=%s\nreqs=%S\nsummary=%s\nurl=%s\n"
      (package-desc-name d) (package-version-join (package-desc-version d))
      (package-desc-reqs d) (package-desc-summary d) (lm-homepage)))))`)
	for _, want := range []string{"\nname=darman\n", "\nversion=0.1.0\n", "\nreqs=((emacs (28 1)) (eglot (1 9)))\n",
		"\nsummary=Opt eglot into darman's custom messages\n", "\nurl=https://github.com/darman-dev/darman\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("package.el read no %q from the headers:\n%s", strings.TrimSpace(want), out)
		}
	}
	if out := run("-L", dir, "--eval", `(progn (require 'darman) (princ (format "\nloaded=%s\n" (featurep 'darman))))`); !strings.Contains(out, "\nloaded=t\n") {
		t.Errorf("(require 'darman) from load-path:\n%s", out)
	}
}
