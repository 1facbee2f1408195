package main_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/internal/testenv"
)

// sandboxReport is the sandbox's state as darman.status and session/new's
// _meta tell it.
type sandboxReport struct {
	Active  bool   `json:"active"`
	Kind    string `json:"kind"`
	Mode    string `json:"mode"`
	Reason  string `json:"reason"`
	Summary string `json:"summary"`
}

// doctorSandboxLine is the line of `darman doctor` about the sandbox.
func doctorSandboxLine(t *testing.T, e *env) string {
	t.Helper()
	out, _, _ := e.run("doctor")
	for line := range strings.SplitSeq(out, "\n") {
		if i := strings.Index(line, "sandbox: "); i >= 0 {
			return strings.TrimSpace(line[i:])
		}
	}
	t.Fatalf("darman doctor says nothing about the sandbox:\n%s", out)
	return ""
}

// lspSandbox is darman.status's agent.sandbox once the agent is ready.
func lspSandbox(t *testing.T, e *env) sandboxReport {
	t.Helper()
	_, c, _, stderr := startLSP(t, e, "--stdio")
	c.initialize(e.workspace, nil)
	var st struct {
		Agent struct {
			State   string        `json:"state"`
			Sandbox sandboxReport `json:"sandbox"`
		} `json:"agent"`
	}
	testenv.Eventually(t, "the agent started", 30*time.Second, func() bool {
		c.Call("workspace/executeCommand", map[string]any{"command": "darman.status"}, &st)
		return st.Agent.State == "ready"
	})
	if st.Agent.Sandbox.Summary == "" {
		t.Fatalf("darman.status has no agent.sandbox: %+v\nstderr: %s", st, stderr)
	}
	return st.Agent.Sandbox
}

// TestLSPStatusReportsSandbox: on Linux the sandbox is on by default and
// darman.status says so, with its kind and the same summary as darman
// doctor; with sandbox.mode "off" it says commands run unsandboxed.
func TestLSPStatusReportsSandbox(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the default sandbox asserted here is Landlock")
	}
	e := newEnv(t)
	e.withModel(t, acpScript())
	sb := lspSandbox(t, e)
	if !sb.Active || sb.Kind != "landlock" || !strings.HasPrefix(sb.Summary, "sandbox: landlock") {
		t.Errorf("darman.status sandbox = %+v; want active landlock", sb)
	}
	if doc := doctorSandboxLine(t, e); doc != sb.Summary {
		t.Errorf("darman.status says %q, darman doctor %q", sb.Summary, doc)
	}

	off := newEnv(t)
	off.withModel(t, acpScript())
	off.configure(`"sandbox": {"mode": "off"}`)
	sb = lspSandbox(t, off)
	if sb.Active || sb.Kind != "" || sb.Mode != "off" || !strings.Contains(sb.Summary, "unsandboxed") {
		t.Errorf("with sandbox.mode off, darman.status sandbox = %+v; want inactive, unsandboxed", sb)
	}
}

// TestACPSessionReportsSandbox: session/new's answer carries the sandbox
// in _meta.darman.sandbox, active with its kind, the summary darman
// doctor prints.
func TestACPSessionReportsSandbox(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the default sandbox asserted here is Landlock")
	}
	e := newEnv(t)
	e.withModel(t, acpScript())
	c := startACP(t, e, nil)
	c.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil)
	var res struct {
		SessionID string `json:"sessionId"`
		Meta      struct {
			Darman struct {
				Sandbox sandboxReport `json:"sandbox"`
			} `json:"darman"`
		} `json:"_meta"`
	}
	c.mustCall("session/new", map[string]any{"cwd": e.workspace, "mcpServers": []any{}}, &res)
	sb := res.Meta.Darman.Sandbox
	if res.SessionID == "" || !sb.Active || sb.Kind != "landlock" || !strings.HasPrefix(sb.Summary, "sandbox: landlock") {
		t.Errorf("session/new sessionId %q, _meta.darman.sandbox = %+v; want active landlock", res.SessionID, sb)
	}
	if doc := doctorSandboxLine(t, e); doc != sb.Summary {
		t.Errorf("session/new says %q, darman doctor %q", sb.Summary, doc)
	}
}
