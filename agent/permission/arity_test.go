package permission

import (
	"slices"
	"testing"
)

func TestSuggest(t *testing.T) {
	tests := []struct {
		line string
		want []string // one per command, "" for none
	}{
		{"git status --short", []string{"git status *"}},
		{"git status", []string{"git status *"}},
		{"git", []string{"git"}},
		{"git -C sub status", []string{"git -C sub status"}}, // an option in the prefix: exact
		{"npm run test -- -u", []string{"npm run test *"}},
		{"npm install", []string{"npm install *"}},
		{"npm run", []string{"npm run"}},
		{"go test ./...", []string{"go test *"}},
		{"go mod tidy", []string{"go mod tidy *"}},
		{"docker compose up -d", []string{"docker compose up *"}},
		{"docker ps", []string{"docker ps *"}},
		{"cargo build --release", []string{"cargo build *"}},
		{"make test", []string{"make test *"}},
		{"make", []string{"make"}},
		{"ls -la", []string{"ls *"}},
		{"pytest -x tests", []string{"pytest *"}},
		{"python script.py --flag", []string{"python script.py *"}},
		{"python -m pytest", []string{"python -m pytest"}},
		{"rm build.log", []string{"rm build.log *"}},
		{"rm -rf build", []string{"rm -rf build"}},
		{"sudo apt install x", []string{"sudo apt install x"}},
		{"gh pr view 12", []string{"gh pr view *"}},
		{"FOO=1 go test ./...", []string{"go test *"}},
		{"cat a > b", []string{"cat *"}},
		{"ls *.go", []string{"ls *"}},
		{`echo "a*b" > x`, []string{"echo *"}},
		{`"a*b"`, []string{`a\*b *`}}, // the literal part is escaped
		{"$CMD x", []string{""}},
		{"git status && npm run build && git status -s", []string{"git status *", "npm run build *", "git status *"}},
	}
	for _, tt := range tests {
		cmds, err := SplitBash(tt.line)
		if err != nil {
			t.Fatalf("SplitBash(%q): %v", tt.line, err)
		}
		var got []string
		for _, c := range cmds {
			got = append(got, c.Suggest())
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("suggestions for %q = %q, want %q", tt.line, got, tt.want)
		}
		// Whatever is suggested must cover the command it came from.
		for i, c := range cmds {
			if got[i] != "" && !match(got[i], c.Subject, false) {
				t.Errorf("suggestion %q does not match its own command %q", got[i], c.Subject)
			}
		}
	}
}
