package permission

import "testing"

func TestDefaults(t *testing.T) {
	rules := Defaults()
	for i, r := range rules {
		if err := r.Validate(); err != nil {
			t.Errorf("default rule %d: %v", i, err)
		}
	}
	tests := []struct {
		permission, subject string
		want                Action
	}{
		{Read, "main.go", Allow},
		{Glob, "**/*.go", Allow},
		{Grep, "src", Allow},
		{List, ".", Allow},
		{"lsp", "diagnostics", Allow},
		{"skill", "release", Allow},
		{"todo", "write", Allow},
		{"task", "explore", Allow},
		{Edit, "main.go", Ask},
		{Write, "new.go", Ask},
		{"webfetch", "https://example.com", Ask},
		{MCP, "github_create_issue", Ask},
		{ExternalDirectory, "/etc/passwd", Ask},
		{DoomLoop, "edit", Ask},
		{"some_new_tool", "x", Ask},

		{Bash, "ls", Allow},
		{Bash, "ls -la src", Allow},
		{Bash, "pwd", Allow},
		{Bash, "echo hello world", Allow},
		{Bash, "cat go.mod", Allow},
		{Bash, "head -n 20 main.go", Allow},
		{Bash, "tail -f log.txt", Allow},
		{Bash, "wc -l *.go", Allow},
		{Bash, "which go", Allow},
		{Bash, "grep -rn TODO src", Allow},
		{Bash, "rg -n 'func main' .", Allow},
		{Bash, "git status", Allow},
		{Bash, "git status --porcelain", Allow},
		{Bash, "git diff HEAD~1", Allow},
		{Bash, "git diff main...HEAD", Allow},
		{Bash, "git log --oneline -10", Allow},
		{Bash, "git show HEAD:go.mod", Allow},
		{Bash, "git status && git diff", Allow},
		{Bash, "ls 2>/dev/null || true", Allow},
		{Bash, "cat go.mod | grep module", Allow},

		{Bash, "lsof -i", Ask},
		{Bash, "go test ./...", Ask},
		{Bash, "rm -rf build", Ask},
		{Bash, "git push", Ask},
		{Bash, "git statusx", Ask},
		{Bash, "cat a > b", Ask},
		{Bash, "echo x >> .bashrc", Ask},
		{Bash, "cat /etc/passwd", Ask},
		{Bash, "ls /", Ask},
		{Bash, "grep --file=/etc/shadow x", Ask},
		{Bash, "cat ~/.ssh/id_rsa", Ask},
		{Bash, "cat ../secret", Ask},
		{Bash, "cat a/../../secret", Ask},
		{Bash, "ls ..", Ask},
		{Bash, "ls .. -la", Ask},
		{Bash, "echo $HOME", Ask},
		{Bash, "cat `echo x`", Ask},
		{Bash, "cat {,/etc/passwd}", Ask},
		{Bash, "head -n1 < /etc/passwd", Ask},
		{Bash, "rg --pre sh x", Ask},
		{Bash, "rg --pre=./x y", Ask},
		{Bash, "git diff --output=.bashrc", Ask},
		{Bash, "git log --output x", Ask},
		{Bash, "git -c core.pager=sh log", Ask},
		{Bash, "git -c user.name=x -c core.pager=sh log", Ask},
		{Bash, "git -c commit.gpgsign=true commit -m x", Ask},
		{Bash, "git -cinclude.path=x status", Ask},
		{Bash, "GIT_EXTERNAL_DIFF=./x git diff", Ask},
		{Bash, "git status; rm -rf ~", Ask},
	}
	for _, tt := range tests {
		if got := Evaluate(rules, tt.permission, tt.subject); got != tt.want {
			t.Errorf("Evaluate(Defaults(), %q, %q) = %s, want %s", tt.permission, tt.subject, got, tt.want)
		}
	}
}

func TestDefaultsYieldToConfiguration(t *testing.T) {
	// Configuration comes after the defaults, so it wins.
	rules := append(Defaults(),
		Rule{Permission: Edit, Pattern: "*", Action: Allow},
		Rule{Permission: Bash, Pattern: "cat *", Action: Allow},
		Rule{Permission: Read, Pattern: ".env", Action: Deny},
	)
	for _, tt := range []struct {
		permission, subject string
		want                Action
	}{
		{Edit, "main.go", Allow},
		// A path outside is external_directory's to allow, never bash's.
		{Bash, "cat /etc/hosts", Ask},
		{Bash, "cat go.mod", Allow},
		{Read, ".env", Deny},
		{Read, "main.go", Allow},
	} {
		if got := Evaluate(rules, tt.permission, tt.subject); got != tt.want {
			t.Errorf("Evaluate(%q, %q) = %s, want %s", tt.permission, tt.subject, got, tt.want)
		}
	}
}
