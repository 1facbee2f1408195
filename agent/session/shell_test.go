package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/tool"
)

func TestShellRunsUnderTheBashPermission(t *testing.T) {
	asker := &scriptedAsker{reply: permission.Reply{Answer: permission.AllowOnce}}
	f := newFixture(t, fixtureOptions{script: llmtest.Script{}, asker: asker, tools: tool.Builtins(tool.Options{}), service: func(o *session.Options) {
		o.Rules = []permission.Rule{
			{Permission: permission.Bash, Pattern: "*", Action: permission.Ask},
			{Permission: permission.Bash, Pattern: "printf *", Action: permission.Allow},
			{Permission: permission.Bash, Pattern: "exit *", Action: permission.Allow},
			{Permission: permission.Bash, Pattern: "rm *", Action: permission.Deny},
		}
	}})
	ctx := context.Background()

	if out, err := f.svc.Shell(ctx, f.sess.ID, "printf 'one\\ntwo'"); err != nil || out != "one\ntwo" {
		t.Errorf("allowed command: %q, %v", out, err)
	}
	if out, err := f.svc.Shell(ctx, f.sess.ID, "printf 'tests failed'; exit 3"); err != nil || out != "tests failed\n(exit status 3)" {
		t.Errorf("failing command: %q, %v", out, err)
	}
	if len(asker.asked) != 0 {
		t.Errorf("allowed commands were asked about: %+v", asker.asked)
	}

	_, err := f.svc.Shell(ctx, f.sess.ID, "rm -rf build")
	var denied *permission.DeniedError
	if !errors.As(err, &denied) || denied.Rule == nil {
		t.Errorf("denied command: %v, want the deny rule's refusal", err)
	}

	// Asked, through the session: the question is one of its events.
	sub, err := f.svc.Subscribe(ctx, f.sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if out, err := f.svc.Shell(ctx, f.sess.ID, "echo asked"); err != nil || out != "asked\n" {
		t.Errorf("asked command: %q, %v", out, err)
	}
	if len(asker.asked) != 1 || asker.asked[0].Permission != permission.Bash {
		t.Fatalf("asked %+v, want one bash question", asker.asked)
	}
	for d := range sub.C() {
		if e := d.Event; e.Kind == agent.EventPermission && e.Permission.Answer != "" {
			if e.Permission.Permission != permission.Bash || !strings.Contains(strings.Join(e.Permission.Subjects, " "), "echo asked") {
				t.Errorf("permission event %+v", e.Permission)
			}
			break
		}
	}

	// A service without bash cannot run commands, and says so.
	g := newFixture(t, fixtureOptions{script: llmtest.Script{}})
	if _, err := g.svc.Shell(ctx, g.sess.ID, "true"); err == nil || !strings.Contains(err.Error(), "no bash tool") {
		t.Errorf("without bash: %v", err)
	}
}
