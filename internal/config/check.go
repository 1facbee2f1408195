package config

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
)

// check looks at what only the merged configuration shows (a provider's
// type may come from one file and its base URL from another) and fills in
// the inferred provider types. A problem names the source that last set the
// entry at fault.
func (ld *loader) check(cfg *Config) {
	add := func(entry, path, msg string) {
		src, ok := ld.origins[entry]
		if !ok {
			src = "defaults"
		}
		ld.ps.add(Problem{Source: src, Path: path, Message: msg})
	}
	types := ProviderType("").values()

	for _, name := range slices.Sorted(maps.Keys(cfg.Provider)) {
		p := cfg.Provider[name]
		entry := keyPath("provider", name)
		builtin, isBuiltin := builtinProviders[name]
		if p.Type == "" {
			if !isBuiltin {
				msg := fmt.Sprintf("required, since %q is not a built-in provider", name)
				if s := suggest(name, BuiltinProviders()); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", s)
				} else {
					msg += " (" + strings.Join(BuiltinProviders(), ", ") + ")"
				}
				add(entry, keyPath(entry, "type"), msg+"; expected "+quoteList(types, "or"))
				continue
			}
			p.Type = builtin
		}
		if p.Type == OpenAICompatible && p.BaseURL == "" && !isBuiltin {
			add(entry, keyPath(entry, "baseURL"), `required for an "openai-compatible" provider, e.g. "http://localhost:8000/v1"`)
		}
		cfg.Provider[name] = p
	}

	for _, key := range []string{"model", "smallModel"} {
		ref := cfg.Model
		if key == "smallModel" {
			ref = cfg.SmallModel
		}
		if ref == "" {
			continue
		}
		provider, _, _ := ParseModelRef(ref)
		if _, ok := cfg.Provider[provider]; ok {
			continue
		}
		if _, ok := builtinProviders[provider]; ok {
			continue
		}
		known := slices.Concat(BuiltinProviders(), slices.Sorted(maps.Keys(cfg.Provider)))
		msg := fmt.Sprintf("unknown provider %q", provider)
		if s := suggest(provider, known); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		msg += "; use a built-in provider (" + strings.Join(BuiltinProviders(), ", ") + ") or configure it under \"provider\""
		add(key, key, msg)
	}

	for _, name := range slices.Sorted(maps.Keys(cfg.LSP)) {
		s := cfg.LSP[name]
		entry := keyPath("lsp", name)
		if s.Disabled {
			continue
		}
		switch {
		case len(s.Command) == 0:
			add(entry, keyPath(entry, "command"), `required: the server's executable and its arguments, e.g. ["gopls"] (or set "disabled": true)`)
		case s.Command[0] == "":
			add(entry, indexPath(keyPath(entry, "command"), 0), "the executable must not be empty")
		}
		if len(s.Extensions) == 0 {
			add(entry, keyPath(entry, "extensions"), `required: the file extensions the server handles, e.g. [".go"] (or set "disabled": true)`)
		}
	}

	for _, name := range slices.Sorted(maps.Keys(cfg.MCPServers)) {
		s := cfg.MCPServers[name]
		entry := keyPath("mcpServers", name)
		if name == "" || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			add(entry, entry, "the server name must be non-empty printable text")
		}
		if !s.IsEnabled() {
			continue
		}
		switch s.Transport() {
		case MCPStdio:
			if s.Command == "" {
				add(entry, keyPath(entry, "command"), `required for a local server: its executable, e.g. "npx" (or give "url" for a remote one, or set "enabled": false)`)
			}
			if s.URL != "" {
				add(entry, keyPath(entry, "url"), `a local (stdio) server has no url; remove it or set "type": "http"`)
			}
		case MCPHTTP, MCPSSE:
			if s.URL == "" {
				add(entry, keyPath(entry, "url"), `required for a remote server, e.g. "https://example.com/mcp"`)
			}
			if s.Command != "" {
				add(entry, keyPath(entry, "command"), "a remote server has no command; remove command or url")
			}
		}
	}

	for i, e := range cfg.WebFetch.Allow {
		if msg := checkFetchAllow(e); msg != "" {
			add("webfetch.allow", indexPath("webfetch.allow", i), msg)
		}
	}

	if cfg.DataDir == "" {
		msg := "must not be empty"
		if _, set := ld.origins["dataDir"]; !set {
			_, err := ld.dirs.data()
			msg = fmt.Sprintf("no default (%v)", err)
		}
		add("dataDir", "dataDir", msg+"; set dataDir in a config file or "+EnvDataDir)
	}
}

// checkAgentPattern says what is wrong with one entry of an MCP server's
// agents key, "" when nothing: it must be a well-formed pattern (path.Match
// syntax) that matches one of MCPAgents, so a typo cannot hide a server
// from every agent unnoticed.
func checkAgentPattern(p string) string {
	agents := MCPAgents()
	want := "; expected " + quoteList(agents, "or") + ", or a pattern of them with * and ?"
	for _, a := range agents {
		ok, err := path.Match(p, a)
		if err != nil {
			return fmt.Sprintf("%q is a malformed pattern (%v)%s", p, err, want)
		}
		if ok {
			return ""
		}
	}
	msg := fmt.Sprintf("%q names no agent", p)
	if s := suggest(p, agents); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg + want
}

// checkFetchAllow says what is wrong with one entry of webfetch.allow, ""
// when nothing: it must be a host name, host:port, address or CIDR range.
func checkFetchAllow(e string) string {
	const want = "; expected a host name, host:port, address or CIDR range, e.g. \"intranet.example\", \"localhost:8080\", \"10.0.0.0/8\""
	e = strings.TrimSpace(e)
	if _, err := netip.ParsePrefix(e); err == nil {
		return ""
	}
	if _, err := netip.ParseAddr(e); err == nil {
		return ""
	}
	if _, err := netip.ParseAddrPort(e); err == nil {
		return ""
	}
	host := e
	if h, p, err := net.SplitHostPort(e); err == nil {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("%q has a bad port %q%s", e, p, want)
		}
		host = h
	}
	if host == "" || strings.ContainsAny(host, "/:@ ?#[]\\") || strings.Contains(e, "://") {
		return fmt.Sprintf("%q is not a host%s", e, want)
	}
	return ""
}
