package client

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"time"
)

// Definition is one configured MCP server. A Definition with Command is a
// local server spoken to over stdio; one with URL is a remote server
// reached over streamable HTTP, or over the legacy HTTP+SSE transport
// when SSE is set.
type Definition struct {
	// Name is the server's name in the configuration; it prefixes its
	// tools' model-facing names.
	Name string
	// Command, Args, Env and Dir start a local server. Env is added to
	// darman's environment; Dir "" is darman's working directory.
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	// Environ is the environment Env is added to (NAME=value entries,
	// secrets already filtered out: see internal/childenv); nil means
	// darman's own.
	Environ []string
	// URL and Headers reach a remote server.
	URL     string
	Headers map[string]string
	// SSE selects the legacy HTTP+SSE transport (protocol 2024-11-05) for
	// URL instead of streamable HTTP.
	SSE bool
	// ConfigFile is the file the server was configured in, for doctor;
	// it names a file, never a secret.
	ConfigFile string
	// Invalid, when set, says why the server cannot start as written (for
	// example a VS Code ${input:...} placeholder); the binding fails with
	// FailureInvalidConfig and this text.
	Invalid string
	// Session, when set, makes the binding the session's own (servers an
	// ACP client passed to session/new): only that session sees its
	// tools. "" is a workspace binding, shared by every session.
	Session string
	// Visible, for a workspace binding, limits it to the sessions and
	// agents named (see Audience), as path.Match patterns; empty means
	// everyone. A malformed pattern is FailureInvalidConfig.
	Visible []string
	// Required: the agent's tools fail until this server is ready.
	Required bool
	// Disabled servers are reported and never started.
	Disabled bool
	// StartupTimeout bounds spawn and handshake; zero means 30s.
	StartupTimeout time.Duration
	// CallTimeout bounds one tool call; zero means 2 minutes.
	CallTimeout time.Duration
	// Allow, if set, exposes only the tools whose names match one of its
	// patterns (path.Match syntax); Deny then hides matching tools.
	Allow, Deny []string
	// Trusted servers' read-only tools (readOnlyHint) run without asking.
	Trusted bool
	// SamplingMaxTokens > 0 means the user allowed this server to sample
	// darman's model, up to that many tokens per request.
	SamplingMaxTokens int
}

const (
	defaultStartupTimeout = 30 * time.Second
	defaultCallTimeout    = 2 * time.Minute
)

func (d Definition) startupTimeout() time.Duration {
	if d.StartupTimeout > 0 {
		return d.StartupTimeout
	}
	return defaultStartupTimeout
}

func (d Definition) callTimeout() time.Duration {
	if d.CallTimeout > 0 {
		return d.CallTimeout
	}
	return defaultCallTimeout
}

// scope is "session" for a session's own binding, "workspace" otherwise.
func (d Definition) scope() string {
	if d.Session != "" {
		return "session"
	}
	return "workspace"
}

// Transport names the definition's transport: "stdio", "http" or "sse".
func (d Definition) Transport() string {
	switch {
	case d.URL != "" && d.SSE:
		return "sse"
	case d.URL != "":
		return "http"
	}
	return "stdio"
}

// RedactedOrigin is where the server is, fit for display and logs: the
// command's base name for a local server (its arguments may hold tokens),
// the URL without credentials or query for a remote one.
func (d Definition) RedactedOrigin() string {
	if d.URL == "" {
		return "stdio: " + filepath.Base(d.Command)
	}
	u, err := url.Parse(d.URL)
	if err != nil {
		return d.Transport() + ": (unparsable url)"
	}
	return d.Transport() + ": " + (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// secrets are the values that must never appear in a message.
func (d Definition) secrets() []string {
	var out []string
	for _, v := range d.Env {
		out = append(out, v)
	}
	for _, v := range d.Headers {
		out = append(out, v)
	}
	for _, a := range d.Args {
		out = append(out, a)
	}
	if u, err := url.Parse(d.URL); err == nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
		if u.User != nil {
			out = append(out, u.User.Username())
		}
		for _, vs := range u.Query() {
			out = append(out, vs...)
		}
		if u.RawQuery != "" {
			out = append(out, u.RawQuery)
		}
	}
	return out
}

// validate reports what makes the definition unusable, before anything is
// started.
func (d Definition) validate(samplingAvailable bool) error {
	switch {
	case d.Invalid != "":
		return fmt.Errorf("%s", d.Invalid)
	case d.Name == "":
		return fmt.Errorf("the server has no name")
	case d.Command == "" && d.URL == "":
		return fmt.Errorf("neither command nor url is set: give a command for a local server or a url for a remote one")
	case d.Command != "" && d.URL != "":
		return fmt.Errorf("both command and url are set: a server is either local (command) or remote (url)")
	case d.SamplingMaxTokens > 0 && !samplingAvailable:
		return fmt.Errorf("sampling is configured but darman has no model to serve it: remove sampling or configure a model")
	case d.SamplingMaxTokens < 0:
		return fmt.Errorf("sampling.maxTokens is %d: it must be positive", d.SamplingMaxTokens)
	}
	if d.URL != "" {
		u, err := url.Parse(d.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("url is not an http(s) URL with a host, e.g. https://example.com/mcp")
		}
	}
	for _, p := range append(append([]string(nil), d.Allow...), d.Deny...) {
		if _, err := filepath.Match(p, ""); err != nil {
			return fmt.Errorf("tool pattern %q is malformed: %v", p, err)
		}
	}
	for _, p := range d.Visible {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("visibility pattern %q is malformed: %v", p, err)
		}
	}
	return nil
}
