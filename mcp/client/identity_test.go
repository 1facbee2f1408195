package client_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/mcp/client"
)

// A session resumed after its server changed a tool's schema hears what
// changed, and nothing when nothing did.
func TestResumeReportsDrift(t *testing.T) {
	rec := client.SessionRecord{Dir: filepath.Join(t.TempDir(), "sessions")}
	run := func(schema string, mutate func(*client.Definition)) []string {
		t.Helper()
		d := fake(t, "s", "ok")
		d.Env["DARMAN_FAKE_SCHEMA"] = schema
		d.Env["SECRET_TOKEN"] = "hunter2-very-secret"
		if mutate != nil {
			mutate(&d)
		}
		m := client.New([]client.Definition{d}, client.Options{Children: newRegistry(t)})
		defer m.Close()
		if err := m.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		drift, err := m.Resume(rec, "ses_1")
		if err != nil {
			t.Fatal(err)
		}
		return drift
	}
	if d := run("v1", nil); d != nil {
		t.Errorf("first run: drift %q; want none for a new session", d)
	}
	if d := run("v1", nil); d != nil {
		t.Errorf("same server again: drift %q; want none", d)
	}
	want := []string{"server s: tool echo's input schema changed"}
	if d := run("v2", nil); !slices.Equal(d, want) {
		t.Errorf("schema changed: drift %q; want %q", d, want)
	}
	d := run("v2", func(d *client.Definition) { d.Deny = []string{"crash"}; d.CallTimeout += time.Second })
	for _, w := range []string{"server s: its tool filter changed", "server s: its timeouts or sampling budget changed", "server s: tool crash removed"} {
		if !slices.Contains(d, w) {
			t.Errorf("filter and limits changed: drift %q lacks %q", d, w)
		}
	}
	data, err := os.ReadFile(filepath.Join(rec.Dir, "ses_1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "hunter2") || strings.Contains(string(data), "SECRET_TOKEN") {
		t.Errorf("the session record holds a secret: %s", data)
	}
}

func TestDriftAddedRemovedAndOffline(t *testing.T) {
	a := client.BindingIdentity{Name: "a", Digest: "1", Required: false, DefinitionDigest: "x", CatalogDigest: "c"}
	b := client.BindingIdentity{Name: "b", Digest: "2"}
	a2 := a
	a2.Required, a2.Digest, a2.DefinitionDigest, a2.CatalogDigest = true, "3", "y", ""
	c := client.BindingIdentity{Name: "c", Digest: "4"}
	got := client.Drift([]client.BindingIdentity{a, b}, []client.BindingIdentity{a2, c})
	want := []string{
		"server a: required changed from false to true",
		"server a: its tools are not known on both sides (not connected)",
		"server c: added",
		"server b: removed",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Drift = %q\nwant %q", got, want)
	}
}

// A session's first MCP call after its server changed tells the model and
// the front what changed, once.
func TestFirstCallOfAResumedSessionReportsDrift(t *testing.T) {
	rec := client.SessionRecord{Dir: filepath.Join(t.TempDir(), "sessions")}
	call := func(schema string) (outputs []string, drift []string) {
		t.Helper()
		d := fake(t, "s", "ok")
		d.Env["DARMAN_FAKE_SCHEMA"] = schema
		m := client.New([]client.Definition{d}, client.Options{Children: newRegistry(t), Sessions: rec,
			OnDrift: func(session string, lines []string) { drift = append(drift, session+": "+strings.Join(lines, "; ")) }})
		defer m.Close()
		if err := m.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		tools, err := m.Tools(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		env := (&recorder{}).env()
		env.SessionID = "ses_r"
		for range 2 {
			res, err := find(t, tools, "s_echo").Run(context.Background(), env, json.RawMessage(`{"text":"x"}`))
			if err != nil {
				t.Fatal(err)
			}
			outputs = append(outputs, res.Output)
		}
		return outputs, drift
	}
	out, drift := call("v1")
	if drift != nil || strings.Contains(out[0], "Note:") {
		t.Errorf("a new session: drift %q, output %q; want none", drift, out[0])
	}
	out, drift = call("v2")
	if want := "ses_r: server s: tool echo's input schema changed"; len(drift) != 1 || drift[0] != want {
		t.Errorf("OnDrift heard %q; want %q", drift, want)
	}
	if !strings.HasPrefix(out[0], "Note: the MCP servers changed since this session last ran: server s: tool echo's input schema changed.") || !strings.HasSuffix(out[0], "echo: x\ndone") {
		t.Errorf("first call's output %q; want the note before the result", out[0])
	}
	if out[1] != "echo: x\ndone" {
		t.Errorf("second call's output %q; want the note only once", out[1])
	}
}

// ForgetSession removes a deleted session's identity record and the
// images its calls returned, and leaves other sessions' alone; the layout
// under darman's data directory keeps both below mcp/.
func TestForgetSession(t *testing.T) {
	dir := t.TempDir()
	layout := client.DataLayout(dir)
	rec, files := layout.Sessions, layout.FilesDir
	if rec.Dir != filepath.Join(dir, "mcp", "sessions") || files != filepath.Join(dir, "mcp", "files") || layout.ProtocolCache != filepath.Join(dir, "mcp", "protocols.json") {
		t.Fatalf("layout = %+v", layout)
	}
	if (client.DataLayout("") != client.Layout{}) {
		t.Error("no data directory still has a layout")
	}
	for _, s := range []string{"ses_gone", "ses_kept"} {
		if err := rec.Save(s, []client.BindingIdentity{{Name: "s"}}); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(files, s), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(files, s, "shot.png"), []byte("png"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := layout.ForgetSession("ses_gone"); err != nil {
		t.Fatal(err)
	}
	if ids, err := rec.Load("ses_gone"); err != nil || ids != nil {
		t.Errorf("the record is still there: %v, %v", ids, err)
	}
	if _, err := os.Stat(filepath.Join(files, "ses_gone")); !os.IsNotExist(err) {
		t.Errorf("the images are still there: %v", err)
	}
	if ids, _ := rec.Load("ses_kept"); len(ids) != 1 {
		t.Error("another session's record went too")
	}
	if _, err := os.Stat(filepath.Join(files, "ses_kept", "shot.png")); err != nil {
		t.Errorf("another session's images went too: %v", err)
	}
	if err := client.ForgetSession(rec, files, "ses_gone"); err != nil {
		t.Errorf("forgetting twice: %v", err)
	}
}
