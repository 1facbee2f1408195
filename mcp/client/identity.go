package client

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
)

// BindingIdentity is what one binding was, in digests and names that hold
// no secret, so a session can record the identities it ran with and a
// resumed session can say what changed (see Drift). Digests are hex
// SHA-256 of a canonical JSON encoding.
type BindingIdentity struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	// Origin is the redacted origin (Definition.RedactedOrigin).
	Origin   string `json:"origin"`
	Scope    string `json:"scope"`
	Required bool   `json:"required"`

	// DefinitionDigest covers the secret-free definition: transport,
	// origin, scope, visibility, trust and whether it is required.
	DefinitionDigest string `json:"definition"`
	// CapabilityDigest covers what darman advertises to the server
	// (sampling, elicitation).
	CapabilityDigest string `json:"capabilities"`
	// FilterDigest covers the allow and deny lists.
	FilterDigest string `json:"filter"`
	// LimitsDigest covers the timeouts and the sampling budget.
	LimitsDigest string `json:"limits"`

	// Server is what the server said it is ("name version"); Protocol the
	// version negotiated. Empty before a handshake.
	Server   string `json:"server,omitempty"`
	Protocol string `json:"protocol,omitempty"`
	// Generation is the catalog's ordinal; reported, never digested (a
	// reconnect that finds the same tools is not drift).
	Generation uint64 `json:"generation,omitempty"`
	// CatalogDigest covers every tool the server offers, before the filter;
	// Tools are those this binding exposes, after it.
	CatalogDigest string         `json:"catalog,omitempty"`
	Tools         []ToolIdentity `json:"tools,omitempty"`

	// Digest covers every field above but Generation.
	Digest string `json:"digest"`
}

// ToolIdentity is one exposed tool.
type ToolIdentity struct {
	RawName      string `json:"raw"`
	ModelName    string `json:"model"`
	InputSchema  string `json:"input"`
	OutputSchema string `json:"output,omitempty"`
}

func digest(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte(fmt.Sprint(v))
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// schemaDigest digests a schema in canonical form (keys sorted, as
// encoding/json writes maps), so key order on the wire is not drift.
func schemaDigest(s any) string {
	if s == nil {
		return ""
	}
	data, err := json.Marshal(s)
	if err != nil || string(data) == "null" {
		return ""
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return digest(string(data))
	}
	return digest(v)
}

// identity computes the binding's identity now.
func (b *binding) identity() BindingIdentity {
	d := b.def
	id := BindingIdentity{Name: d.Name, Transport: d.Transport(), Origin: d.RedactedOrigin(), Scope: d.scope(), Required: d.Required}
	id.DefinitionDigest = digest([]any{id.Transport, id.Origin, id.Scope, d.Visible, d.Trusted, d.Required})
	id.CapabilityDigest = digest(map[string]bool{
		"sampling":    d.SamplingMaxTokens > 0 && b.m.opts.Sampler != nil,
		"elicitation": b.m.opts.Gate != nil,
	})
	id.FilterDigest = digest([][]string{d.Allow, d.Deny})
	id.LimitsDigest = digest([]any{d.startupTimeout().String(), d.callTimeout().String(), d.SamplingMaxTokens})
	b.mu.Lock()
	cat := b.cat
	b.mu.Unlock()
	if cat != nil {
		id.Server, id.Protocol, id.Generation = cat.server, cat.protocol, cat.gen
		id.CatalogDigest = cat.digest
		for _, t := range cat.tools {
			id.Tools = append(id.Tools, ToolIdentity{RawName: t.raw.Name, ModelName: t.name,
				InputSchema: schemaDigest(t.raw.InputSchema), OutputSchema: schemaDigest(t.raw.OutputSchema)})
		}
	}
	gen := id.Generation
	id.Generation = 0
	id.Digest = digest(id)
	id.Generation = gen
	return id
}

// Identities returns every enabled binding's identity, in name order.
func (m *Manager) Identities() []BindingIdentity {
	var out []BindingIdentity
	for _, b := range m.bindings {
		if !b.def.Disabled {
			out = append(out, b.identity())
		}
	}
	return out
}

// Drift says, one line per change, how the bindings differ from those a
// session ran with before ("server github: tool create_issue's input
// schema changed"). A binding never connected on either side is compared
// on its configuration only. No change gives nil.
func Drift(before, after []BindingIdentity) []string {
	var out []string
	prev := map[string]BindingIdentity{}
	for _, b := range before {
		prev[b.Name] = b
	}
	seen := map[string]bool{}
	for _, a := range after {
		seen[a.Name] = true
		b, ok := prev[a.Name]
		if !ok {
			out = append(out, fmt.Sprintf("server %s: added", a.Name))
			continue
		}
		if a.Digest == b.Digest {
			continue
		}
		say := func(format string, args ...any) {
			out = append(out, fmt.Sprintf("server %s: ", a.Name)+fmt.Sprintf(format, args...))
		}
		if a.Transport != b.Transport || a.Origin != b.Origin {
			say("now %s (was %s)", a.Origin, b.Origin)
		}
		if a.Required != b.Required {
			say("required changed from %t to %t", b.Required, a.Required)
		}
		if a.Scope != b.Scope {
			say("scope changed from %s to %s", b.Scope, a.Scope)
		} else if a.DefinitionDigest != b.DefinitionDigest && a.Transport == b.Transport && a.Origin == b.Origin && a.Required == b.Required {
			say("its trust or visibility changed")
		}
		if a.CapabilityDigest != b.CapabilityDigest {
			say("what darman offers it (sampling, elicitation) changed")
		}
		if a.FilterDigest != b.FilterDigest {
			say("its tool filter changed")
		}
		if a.LimitsDigest != b.LimitsDigest {
			say("its timeouts or sampling budget changed")
		}
		if a.CatalogDigest == "" || b.CatalogDigest == "" {
			if a.CatalogDigest != b.CatalogDigest {
				say("its tools are not known on both sides (not connected)")
			}
			continue
		}
		if a.Server != b.Server {
			say("the server is now %q (was %q)", a.Server, b.Server)
		}
		if a.Protocol != b.Protocol {
			say("protocol %s (was %s)", a.Protocol, b.Protocol)
		}
		out = append(out, toolDrift(a.Name, b.Tools, a.Tools)...)
	}
	for _, b := range before {
		if !seen[b.Name] {
			out = append(out, fmt.Sprintf("server %s: removed", b.Name))
		}
	}
	return out
}

func toolDrift(server string, before, after []ToolIdentity) []string {
	var out []string
	prev := map[string]ToolIdentity{}
	for _, t := range before {
		prev[t.RawName] = t
	}
	now := map[string]bool{}
	for _, t := range after {
		now[t.RawName] = true
		p, ok := prev[t.RawName]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("server %s: tool %s added", server, t.RawName))
			continue
		case p.ModelName != t.ModelName:
			out = append(out, fmt.Sprintf("server %s: tool %s is now %s to the model (was %s)", server, t.RawName, t.ModelName, p.ModelName))
		}
		if p.InputSchema != t.InputSchema {
			out = append(out, fmt.Sprintf("server %s: tool %s's input schema changed", server, t.RawName))
		}
		if p.OutputSchema != t.OutputSchema {
			out = append(out, fmt.Sprintf("server %s: tool %s's output schema changed", server, t.RawName))
		}
	}
	var gone []string
	for name := range prev {
		if !now[name] {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	for _, name := range gone {
		out = append(out, fmt.Sprintf("server %s: tool %s removed", server, name))
	}
	return out
}

// SessionRecord keeps the identities each session last ran with, as one
// small JSON file per session under Dir.
type SessionRecord struct {
	Dir string
}

func (r SessionRecord) path(session string) string {
	return filepath.Join(r.Dir, sanitize(session)+".json")
}

// ForgetSession removes what the client keeps of a deleted session: the
// identities it ran with (in r) and the images its tool calls returned
// (under filesDir, as Options.FilesDir). Either may be empty; nothing kept
// is not an error.
func ForgetSession(r SessionRecord, filesDir, session string) error {
	var errs []error
	if r.Dir != "" {
		if err := os.Remove(r.path(session)); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	if filesDir != "" {
		errs = append(errs, os.RemoveAll(filepath.Join(filesDir, sanitize(session))))
	}
	return errors.Join(errs...)
}

// Load returns the identities session last ran with; none recorded is nil
// without an error.
func (r SessionRecord) Load(session string) ([]BindingIdentity, error) {
	data, err := os.ReadFile(r.path(session))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []BindingIdentity
	if err := json.Unmarshal(data, &ids); err != nil {
		return nil, fmt.Errorf("%s: %v; delete it to start the record afresh", r.path(session), err)
	}
	return ids, nil
}

// Save records the identities session runs with.
func (r SessionRecord) Save(session string, ids []BindingIdentity) error {
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(ids, "", " ")
	if err != nil {
		return err
	}
	tmp := r.path(session) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, r.path(session))
}

// Resume compares the manager's bindings with those session last ran
// with, records the current ones, and returns the drift (nil for a new
// session or no change). Bindings that are not ready yet are compared on
// their configuration only, so call it after Wait for a full report.
func (m *Manager) Resume(r SessionRecord, session string) ([]string, error) {
	before, err := r.Load(session)
	if err != nil {
		return nil, err
	}
	now := m.Identities()
	var drift []string
	if before != nil {
		drift = Drift(before, now)
	}
	// Keep what is known: a binding not connected this time keeps its last
	// catalog on record, so the next resume still compares tools.
	for i, id := range now {
		if id.CatalogDigest != "" {
			continue
		}
		if j := slices.IndexFunc(before, func(b BindingIdentity) bool { return b.Name == id.Name }); j >= 0 && before[j].DefinitionDigest == id.DefinitionDigest {
			now[i] = before[j]
		}
	}
	return drift, r.Save(session, now)
}
