package editors

import (
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// applyCase is a case of an editor's "apply a code block" test: the
// answer's fence, the person's answer to the permission, the file they
// type when the fence names none, the file applied to, and what they are
// told.
type applyCase struct{ name, fence, choice, input, file, told string }

// testApplyCodeBlock runs the cases in the Debian sid root: an answer with
// a fenced block, applied from the editor that run starts (given the
// case's environment for its script), and checks by effect what the
// script reports, what the person was asked and told, and the files at the
// end. allowed and rejected are the fences of those two cases, so that each
// editor's test covers other forms; command is what the script reports
// for the command's presence, version the editor's version prefix.
func testApplyCodeBlock(t *testing.T, allowed, rejected, command, version string,
	run func(t *testing.T, s *sid, c applyCase, env []string) map[string][]string) {
	code := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"héllo, wörld\")\n}\n"
	for _, c := range []applyCase{
		{"allowed", allowed, "Allow once", "", "main.go", "darman: applied to main.go"},
		{"rejected", rejected, "Reject", "", "main.go", "darman: not applied to main.go"},
		// A fence naming no file: the file is the one the user types.
		{"typed", "```go", "Allow once", "main.go", "main.go", "darman: applied to main.go"},
		// A secret: darman refuses, nothing is asked or written.
		{"secret", "```sh title=.env", "Allow once", "", ".env", "darman: not applied to .env: darman.turn.apply: .env looks like a secret"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSid(t)
			answer := "Here is main.go fixed:\n\n" + c.fence + "\n" + code + "```\n\nApply it."
			s.workspace(llmtest.Script{Steps: []llmtest.Step{{Text: answer}}}, map[string]string{"main.go": helixMain}, "")
			secret := c.file == ".env"
			revert := "0"
			if c.choice == "Allow once" && !secret {
				revert = "1"
			}
			r := run(t, s, c, []string{"CHOICE=" + c.choice, "CODE=" + code, "INPUT=" + c.input, "FILE=" + c.file, "REVERT=" + revert})
			want := map[string]string{"command": command, "outside": "true", "stopped": "true"}
			if revert == "1" {
				want["disk_is_code"], want["buffer_is_code"], want["reverted"] = "true", "true", "true"
			} else {
				want["disk_unchanged"], want["buffer_is_code"] = "true", "false"
			}
			expect(t, r, want)
			if v := r["version"]; len(v) != 1 || !strings.HasPrefix(v[0], version) {
				t.Errorf("version %v, want %s", v, version)
			}
			if a := r["asked"]; secret && len(a) != 0 {
				t.Errorf("the person was asked %v about a secret darman refuses", a)
			} else if !secret && (len(a) != 1 || !strings.Contains(a[0], "main.go")) {
				t.Errorf("the person was asked %v, want the edit of main.go once", a)
			}
			if in := r["input"]; c.input == "" && len(in) != 0 {
				t.Errorf("a file was read %v, though the fence names one", in)
			} else if c.input != "" && (len(in) != 1 || in[0] != "Apply the code block to file: main.go") {
				t.Errorf("the file was read as %v, want the prompt with main.go (the file the user came from) as the default", in)
			}
			if told := r["told"]; len(told) != 1 || !strings.HasPrefix(told[0], c.told) {
				t.Errorf("the person was told %v, want %q", told, c.told)
			}
			// Rejected, refused, or applied and then reverted: main.go is
			// as it was, and no .env was made.
			if got := s.read("ws/main.go"); got != helixMain {
				t.Errorf("main.go at the end:\n%s", got)
			}
			if fileExists(s.host("ws/.env")) {
				t.Errorf("darman wrote .env")
			}
		})
	}
}
