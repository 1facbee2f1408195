package permission

import (
	"errors"
	"testing"
)

func TestSplitPowerShell(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []cmd
	}{
		{"Get-ChildItem -Force", []cmd{{subject: "get-childitem -Force"}}},
		{"ls; dir src | Select-String foo", []cmd{{subject: "get-childitem"}, {subject: "get-childitem src"}, {subject: "select-string foo"}}},
		{"RM -Recurse build", []cmd{{subject: "remove-item -Recurse build"}}},
		{"git.exe status && go test ./...", []cmd{{subject: "git status"}, {subject: "go test ./..."}}},
		{"echo 'it''s' \"plain\"", []cmd{{subject: "write-output it's plain"}}},
		{"go build 2>&1 | Out-Null", []cmd{{subject: "go build"}, {subject: "out-null"}}},
		{"go vet > $null", []cmd{{subject: "go vet"}}},
		{"echo hi > out.txt", []cmd{{subject: "write-output hi > out.txt", writes: []string{"out.txt"}}}},
		{"echo hi 2>> 'C:\\logs\\err.txt'", []cmd{{subject: "write-output hi 2>> C:\\logs\\err.txt", writes: []string{"C:\\logs\\err.txt"}}}},
		{"go test # the tests\r\n<# a block\ncomment #> go vet", []cmd{{subject: "go test"}, {subject: "go vet"}}},
		{"Remove-Item $env:TEMP\\x", []cmd{{subject: "remove-item $env:TEMP\\x", opaque: true}}},
		{"echo \"$(whoami)\"", []cmd{{subject: "write-output $(whoami)", opaque: true}}},
		{"& $tool --version", []cmd{{subject: "$tool --version", opaque: true}}},
		{"iex 'rm -r C:\\'", []cmd{{subject: "invoke-expression rm -r C:\\", opaque: true}}},
		{". .\\profile.ps1", []cmd{{subject: ".\\profile.ps1", opaque: true}}},
		{"Microsoft.PowerShell.Management\\Remove-Item -Recurse build", []cmd{{subject: "remove-item -Recurse build"}}},
		{"microsoft.powershell.utility\\echo hi", []cmd{{subject: "write-output hi"}}},
		{"& 'Microsoft.PowerShell.Management\\Remove-Item' x", []cmd{{subject: "remove-item x", opaque: true}}},
		{". rm x", []cmd{{subject: "remove-item x", opaque: true}}},
		{"tools\\Remove-Item x", []cmd{{subject: "remove-item x", opaque: true}, {subject: "tools\\remove-item x", opaque: true}}},
		{".\\Remove-Item x", []cmd{{subject: ".\\remove-item x"}}},
		{"..\\bin\\rg.exe foo", []cmd{{subject: "..\\bin\\rg foo"}}},
		{"tools\\rg.exe foo", []cmd{{subject: "tools\\rg foo"}}},
		{"C:\\tools\\rg.exe foo", []cmd{{subject: "c:\\tools\\rg foo"}}},
		{"scripts\\build.ps1", []cmd{{subject: "scripts\\build.ps1"}}},
		{"Copy-Item @args", []cmd{{subject: "copy-item @args", opaque: true}}},
		{"echo a`nb", []cmd{{subject: "write-output a`nb", opaque: true}}},
		{"", nil},
	} {
		got, err := SplitPowerShell(tc.line)
		if err != nil {
			t.Errorf("SplitPowerShell(%q): %v", tc.line, err)
			continue
		}
		if !sameCommands(got, tc.want) {
			t.Errorf("SplitPowerShell(%q)\n got %s\nwant %s", tc.line, showCommands(got), showWant(tc.want))
		}
	}
}

// What the checker cannot follow fails to parse, so it is asked whole.
func TestSplitPowerShellRefuses(t *testing.T) {
	for _, line := range []string{
		"Get-ChildItem | ForEach-Object { Remove-Item $_ }",
		"(Get-Content a.txt) | Set-Content b.txt",
		"[IO.File]::Delete('x')",
		"if ($true) { rm x }",
		"foreach ($f in ls) { rm $f }",
		"function f { rm x }; f",
		"echo 'unclosed",
		"echo \"unclosed",
		"Get-Content < in.txt",
		"rm \u2013Recurse x",      // an en dash PowerShell reads as -
		"echo \u2018quoted\u2019", // typographic quotes PowerShell reads as '
		"<# never closed",
		"echo x >",
	} {
		if cmds, err := SplitPowerShell(line); err == nil {
			t.Errorf("SplitPowerShell(%q) = %s, want an error", line, showCommands(cmds))
		}
	}
}

func TestCheckerDecidesPowerShell(t *testing.T) {
	asker := &scriptedAsker{t: t, replies: []Reply{{Answer: RejectOnce}, {Answer: RejectOnce}, {Answer: RejectOnce}, {Answer: RejectOnce}}}
	c := newChecker(t, Options{Asker: asker, Rules: []Rule{
		{Permission: Bash, Pattern: "get-childitem *", Action: Allow},
		{Permission: Bash, Pattern: "git status*", Action: Allow},
		{Permission: Bash, Pattern: "remove-item *", Action: Deny},
		{Permission: Bash, Pattern: "tools\\deploy *", Action: Deny},
	}})
	ps := func(line string) Call { return Call{Permission: Bash, Shell: PowerShell, Subjects: []string{line}} }
	if err := c.Check(t.Context(), ps("ls -Force; GIT.EXE status")); err != nil {
		t.Errorf("allowed commands: %v", err)
	}
	// An alias in any case does not dodge the deny rule.
	var denied *DeniedError
	if err := c.Check(t.Context(), ps("git status; DEL -Recurse build")); !errors.As(err, &denied) {
		t.Fatalf("del = %v, want denied", err)
	}
	if n := len(asker.requests()); n != 0 {
		t.Fatalf("asked %d times before the unparsable lines", n)
	}
	// Nor does a module's qualification, or dot-sourcing, in any form.
	for _, line := range []string{
		"Microsoft.PowerShell.Management\\Remove-Item -Recurse build",
		"& Microsoft.PowerShell.Management\\Remove-Item build",
		"& 'microsoft.powershell.management\\rm' build",
		". Remove-Item build",
		"SomeModule\\Remove-Item build",
		"Tools\\Deploy prod", // a script by that path, or the module Tools's Deploy
	} {
		if err := c.Check(t.Context(), ps(line)); !errors.As(err, &denied) {
			t.Errorf("%q = %v, want denied by remove-item * or tools\\deploy *", line, err)
		}
	}
	if err := c.Check(t.Context(), ps("Microsoft.PowerShell.Management\\Get-ChildItem -Force")); err != nil {
		t.Errorf("a core module's qualified get-childitem: %v, want it allowed", err)
	}
	// A script block, a variable or Invoke-Expression is asked even where an
	// allow rule matches the text.
	for _, line := range []string{"ls | % { rm $_ }", "ls $home", "ls; iex 'ls'"} {
		if err := c.Check(t.Context(), ps(line)); err == nil {
			t.Errorf("%q ran without asking", line)
		}
	}
	if n := len(asker.requests()); n != 3 {
		t.Errorf("asked %d times, want 3", n)
	}
	// The same line as bash is bash's: "get-childitem *" does not allow ls.
	if err := c.Check(t.Context(), Call{Permission: Bash, Subjects: []string{"ls -Force"}}); err == nil {
		t.Errorf("bash ls -Force was allowed by a PowerShell rule")
	}
}
