package config_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/internal/config"
)

func TestSubstitution(t *testing.T) {
	f := newFixture(t)
	f.env["ANTHROPIC_API_KEY"] = "sk-ant-from-env"
	f.env["EMPTY"] = ""
	f.env["TRICKY"] = "${env:ANTHROPIC_API_KEY}"
	f.write(".darman/key.txt", "key-from-file\n")
	f.write(filepath.Join(f.home, "secrets", "token"), "token-from-home\r\n")
	f.write(".darman/config.json", `{
		"provider": {
			"anthropic": {
				"apiKey": "${env:ANTHROPIC_API_KEY}",
				"headers": {
					"x-file": "${file:key.txt}",
					"x-home": "Bearer ${file:~/secrets/token}",
					"x-both": "${env:ANTHROPIC_API_KEY}/${file:key.txt}",
					"x-literal": "$${env:ANTHROPIC_API_KEY} costs $5",
					"x-empty": "[${env:EMPTY}]",
					"x-tricky": "${env:TRICKY}",
				},
			},
		},
		"lsp": {"go": {"command": ["gopls", "-logfile=${env:ANTHROPIC_API_KEY}"],
			"initializationOptions": {"token": "${file:key.txt}", "n": [1, "${env:EMPTY}"]}}},
	}`)
	l := f.mustLoad()
	p := l.Config.Provider["anthropic"]
	if p.APIKey != "sk-ant-from-env" {
		t.Errorf("apiKey = %q", p.APIKey)
	}
	want := map[string]string{
		"x-file":    "key-from-file",
		"x-home":    "Bearer token-from-home",
		"x-both":    "sk-ant-from-env/key-from-file",
		"x-literal": "${env:ANTHROPIC_API_KEY} costs $5",
		"x-empty":   "[]",
		"x-tricky":  "${env:ANTHROPIC_API_KEY}", // substituted values are not expanded again
	}
	for k, v := range want {
		if p.Headers[k] != v {
			t.Errorf("headers[%q] = %q; want %q", k, p.Headers[k], v)
		}
	}
	goLSP := l.Config.LSP["go"]
	if goLSP.Command[1] != "-logfile=sk-ant-from-env" {
		t.Errorf("array element not substituted: %q", goLSP.Command)
	}
	if got := string(goLSP.InitializationOptions); got != `{"token":"key-from-file","n":[1,""]}` {
		t.Errorf("initializationOptions = %s", got)
	}
	if len(l.Warnings) != 0 {
		t.Errorf("warnings = %q; want none (EMPTY is set, only to an empty value)", l.Warnings)
	}
}

func TestSubstitutionUnsetEnvWarns(t *testing.T) {
	f := newFixture(t)
	f.write("darman.json", `{"provider": {"openai": {"apiKey": "${env:OPENAI_API_KEY}"}}}`)
	l := f.mustLoad()
	if got := l.Config.Provider["openai"].APIKey; got != "" {
		t.Errorf("apiKey = %q; want empty", got)
	}
	want := []string{"darman.json: provider.openai.apiKey: environment variable OPENAI_API_KEY is not set; using an empty string"}
	if !slices.Equal(l.Warnings, want) {
		t.Errorf("warnings = %q; want %q", l.Warnings, want)
	}
}

func TestSubstitutionErrors(t *testing.T) {
	tests := []struct {
		value string
		want  string // after "darman.json: provider.anthropic.apiKey: "
	}{
		{"${file:missing.txt}", "${file:missing.txt}: cannot read ROOT/missing.txt: no such file or directory"},
		{"${file:~/nope}", "${file:~/nope}: cannot read HOME/nope: no such file or directory"},
		{"${file:.}", "${file:.}: ROOT is a directory"},
		{"${file:/dev/null}", "${file:/dev/null}: /dev/null is not a regular file"},
		{"${env:}", "${env:} needs a variable name, e.g. ${env:ANTHROPIC_API_KEY}"},
		{"${file:}", "${file:} needs a path, e.g. ${file:~/.config/anthropic-key}"},
		{"${vault:kv/key}", "${vault:kv/key} is not a substitution: write ${env:NAME} or ${file:path}, or $${ for a literal ${"},
		{"${}", "${} is not a substitution: write ${env:NAME} or ${file:path}, or $${ for a literal ${"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			f := newFixture(t)
			f.write("darman.json", `{"provider": {"anthropic": {"apiKey": "`+tt.value+`"}}}`)
			_, err := f.load()
			want := "darman.json: provider.anthropic.apiKey: " + strings.NewReplacer("ROOT", f.root, "HOME", f.home).Replace(tt.want)
			if err == nil || err.Error() != want {
				t.Errorf("err = %v\nwant %s", err, want)
			}
		})
	}
}

func TestFileSubstitutionRelativeToEachFile(t *testing.T) {
	f := newFixture(t)
	f.write(filepath.Join(f.user, "key"), "user-key")
	f.writeUser(`{"provider": {"anthropic": {"apiKey": "${file:key}"}}}`)
	f.write("key", "project-key")
	f.write("darman.json", `{"provider": {"openai": {"apiKey": "${file:key}"}}}`)
	c := f.mustLoad().Config
	if c.Provider["anthropic"].APIKey != "user-key" || c.Provider["openai"].APIKey != "project-key" {
		t.Errorf("keys = %q, %q; want each file's own directory used", c.Provider["anthropic"].APIKey, c.Provider["openai"].APIKey)
	}
}

func TestFailedSubstitutionIsNotCheckedAgain(t *testing.T) {
	f := newFixture(t)
	f.write("darman.json", `{"model": "${file:model.txt}"}`)
	_, err := f.load()
	var ce *config.Error
	if !errors.As(err, &ce) || len(ce.Problems) != 1 || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v; want exactly the missing-file problem, not also a bad model reference", err)
	}
}
