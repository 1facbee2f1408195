package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// The MCP files of other tools that darman also reads, so servers a user
// already configured work without copying them. Each is read only for its
// MCP servers; darman's own mcpServers win over them by name.
const (
	// MCPFileProject is Claude Code's project file, at the workspace root.
	MCPFileProject = ".mcp.json"
	// MCPFileVSCode is VS Code's workspace file; its key is "servers".
	MCPFileVSCode = ".vscode/mcp.json"
	// MCPFileClaudeUser is Claude Code's user file, in the home directory:
	// its top-level mcpServers and those of projects[<workspace root>].
	MCPFileClaudeUser = ".claude.json"
)

// foreignFlavor says which substitutions a foreign file's strings use.
type foreignFlavor int

const (
	flavorClaude foreignFlavor = iota // ${VAR}, ${VAR:-default}, ${env:VAR}
	flavorVSCode                      // ${env:VAR}, ${workspaceFolder}, ${userHome}; ${input:id} is unsupported
)

// foreignServer is one server entry of a foreign file, read leniently:
// keys darman does not use are ignored.
type foreignServer struct {
	Type     string            `json:"type"`
	Command  string            `json:"command"`
	Args     []string          `json:"args"`
	Env      map[string]string `json:"env"`
	EnvFile  string            `json:"envFile"`
	Cwd      string            `json:"cwd"`
	URL      string            `json:"url"`
	Headers  map[string]string `json:"headers"`
	Disabled bool              `json:"disabled"`
}

// foreignMCP reads the other tools' MCP files and adds each server that
// darman's own configuration does not name, recording the file it came
// from in Origin. Lowest precedence first: Claude's user servers, VS
// Code's file, .mcp.json, Claude's servers for this project. A foreign
// file that cannot be read or parsed is a warning, never a failed load:
// it is not darman's file.
func (ld *loader) foreignMCP(cfg *Config) {
	found := map[string]MCPServer{}
	add := func(path string, servers map[string]MCPServer) {
		for name, s := range servers {
			s.Origin = path
			found[name] = s
		}
	}
	var claudeProject map[string]MCPServer
	if home, err := ld.dirs.home(); err == nil {
		path := filepath.Join(home, MCPFileClaudeUser)
		if user, project, ok := ld.claudeUser(path); ok {
			add(path, ld.foreignServers(path, user, flavorClaude))
			claudeProject = ld.foreignServers(path, project, flavorClaude)
		}
	}
	// The workspace's files start servers only once it is trusted.
	path := filepath.Join(ld.root, filepath.FromSlash(MCPFileVSCode))
	if ld.trusted {
		if tree := ld.foreignTree(path); tree != nil {
			add(path, ld.foreignServers(path, tree.field("servers"), flavorVSCode))
		}
	}
	path = filepath.Join(ld.root, MCPFileProject)
	if ld.trusted {
		if tree := ld.foreignTree(path); tree != nil {
			add(path, ld.foreignServers(path, tree.field("mcpServers"), flavorClaude))
		}
	}
	if home, err := ld.dirs.home(); err == nil {
		add(filepath.Join(home, MCPFileClaudeUser), claudeProject)
	}
	for name, s := range found {
		if _, own := cfg.MCPServers[name]; own {
			continue
		}
		if cfg.MCPServers == nil {
			cfg.MCPServers = map[string]MCPServer{}
		}
		cfg.MCPServers[name] = s
	}
	for name, s := range cfg.MCPServers {
		if s.Origin == "" {
			if src, ok := ld.origins[keyPath("mcpServers", name)]; ok {
				s.Origin = src
				cfg.MCPServers[name] = s
			}
		}
	}
}

// maxForeignSize bounds another tool's file: ~/.claude.json keeps Claude
// Code's history too and grows past darman's own 4 MiB bound.
const maxForeignSize = 64 << 20

// readForeign reads another tool's file, refusing what could hang or
// exhaust the process as readFile does.
func readForeign(path string) ([]byte, error) {
	f, size, err := openForeign(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	b.Grow(int(size) + bytes.MinRead)
	_, err = b.ReadFrom(f)
	return b.Bytes(), err
}

// openForeign opens another tool's file for reading when it is a regular
// file within maxForeignSize, and returns its size.
func openForeign(path string) (*os.File, int64, error) {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, 0, err
	case !fi.Mode().IsRegular():
		return nil, 0, errors.New("not a regular file")
	case fi.Size() > maxForeignSize:
		return nil, 0, errors.New("larger than 64 MiB")
	}
	f, err := os.Open(path)
	return f, fi.Size(), err
}

// claudeUser reads Claude Code's user file for its top-level mcpServers
// and projects[<workspace root>].mcpServers; ok is false when the file is
// missing or unusable (a warning says why). The file also keeps Claude
// Code's history, megabytes of it, so it is streamed and every other
// value is skipped without being built. A file the strict decoder refuses
// (a comment, a trailing comma, broken JSON) is parsed whole instead,
// which accepts JSON with comments and words an error with its line and
// column.
func (ld *loader) claudeUser(path string) (user, project *node, ok bool) {
	f, _, err := openForeign(path)
	if err != nil {
		if !os.IsNotExist(err) {
			ld.ps.warnings = append(ld.ps.warnings, fmt.Sprintf("%s: cannot read its MCP servers: %v", path, pathErrCause(err)))
		}
		return nil, nil, false
	}
	user, project, err = scanClaudeUser(f, ld.root)
	f.Close()
	if err == nil {
		return user, project, true
	}
	tree := ld.foreignTree(path)
	if tree == nil {
		return nil, nil, false
	}
	return tree.field("mcpServers"), tree.field("projects").field(ld.root).field("mcpServers"), true
}

// scanClaudeUser streams a strict JSON object and returns its member
// mcpServers and projects[root].mcpServers, each nil when absent. As
// node.field, the first of repeated keys counts.
func scanClaudeUser(r io.Reader, root string) (user, project *node, err error) {
	dec := jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var seenUser, seenProjects bool
	err = scanObject(dec, func(key string) error {
		switch {
		case key == "mcpServers" && !seenUser:
			seenUser = true
			user, err = readNode(dec)
			return err
		case key == "projects" && !seenProjects && dec.PeekKind() == '{':
			seenProjects = true
			return scanObject(dec, func(key string) error {
				if key != root || project != nil || dec.PeekKind() != '{' {
					return dec.SkipValue()
				}
				var seen bool
				return scanObject(dec, func(key string) error {
					if key != "mcpServers" || seen {
						return dec.SkipValue()
					}
					seen = true
					project, err = readNode(dec)
					return err
				})
			})
		}
		return dec.SkipValue()
	})
	if err != nil {
		return nil, nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, nil, errors.New("more than one JSON value")
	}
	return user, project, nil
}

// scanObject reads an object, calling member for each key with the
// decoder before the key's value, which member must consume.
func scanObject(dec *jsontext.Decoder, member func(key string) error) error {
	if tok, err := dec.ReadToken(); err != nil {
		return err
	} else if tok.Kind() != '{' {
		return errors.New("not an object")
	}
	for dec.PeekKind() == '"' {
		key, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if err := member(key.String()); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken() // '}', or what is wrong in its place
	return err
}

// readNode reads the decoder's next value as a node.
func readNode(dec *jsontext.Decoder) (*node, error) {
	v, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	n, serr := parse(bytes.Clone(v))
	if serr != nil {
		return nil, errors.New(serr.msg)
	}
	return n, nil
}

// foreignTree parses a foreign file; a missing one is nil without a word.
func (ld *loader) foreignTree(path string) *node {
	data, err := readForeign(path)
	if err != nil {
		if !os.IsNotExist(err) {
			ld.ps.warnings = append(ld.ps.warnings, fmt.Sprintf("%s: cannot read its MCP servers: %v", path, pathErrCause(err)))
		}
		return nil
	}
	tree, serr := parse(data)
	if serr != nil {
		ld.ps.warnings = append(ld.ps.warnings, fmt.Sprintf("%s:%d:%d: invalid JSON (%s); its MCP servers are ignored", path, serr.line, serr.column, serr.msg))
		return nil
	}
	if tree.kind != kindObject {
		ld.ps.warnings = append(ld.ps.warnings, fmt.Sprintf("%s: expected a JSON object; its MCP servers are ignored", path))
		return nil
	}
	return tree
}

// field returns an object's member by key, nil when absent or n is not an
// object.
func (n *node) field(key string) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	for _, m := range n.fields {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// foreignServers converts a foreign file's servers object. A malformed
// entry is a warning and left out; one that uses what darman cannot
// provide (VS Code's ${input:...}) is kept with Problem set, so doctor
// and the binding say why it cannot start instead of starting it broken.
func (ld *loader) foreignServers(path string, servers *node, flavor foreignFlavor) map[string]MCPServer {
	if servers == nil {
		return nil
	}
	if servers.kind != kindObject {
		ld.ps.warnings = append(ld.ps.warnings, fmt.Sprintf("%s: the servers are not an object; ignored", path))
		return nil
	}
	out := map[string]MCPServer{}
	for _, m := range servers.fields {
		warn := func(msg string) {
			ld.ps.warnings = append(ld.ps.warnings, fmt.Sprintf("%s: MCP server %q: %s", path, m.key, msg))
		}
		var fs foreignServer
		dec := json.NewDecoder(bytes.NewReader(m.value.rawJSON()))
		if err := dec.Decode(&fs); err != nil {
			warn(fmt.Sprintf("not a server entry (%v); ignored", err))
			continue
		}
		s, problems := ld.convertForeign(fs, flavor)
		for _, p := range problems {
			warn(p)
		}
		if m.value.kind == kindObject && m.value.field("agents") != nil {
			// Read here it would limit the server in darman and nowhere
			// else; ignoring it silently would leave the user believing
			// it does.
			warn(`"agents" is read only from darman's own mcpServers: every agent sees this server; to limit it, define it there with agents`)
		}
		switch {
		case s.Problem != "":
		case s.Command == "" && s.URL == "":
			warn("has neither command nor url; ignored")
			continue
		case s.Type != "" && !slices.Contains(MCPTransport("").values(), string(s.Type)):
			warn(fmt.Sprintf("type %q is not stdio, http or sse; ignored", s.Type))
			continue
		}
		out[m.key] = s
	}
	return out
}

func (ld *loader) convertForeign(fs foreignServer, flavor foreignFlavor) (MCPServer, []string) {
	var (
		problems []string
		inputs   []string
	)
	expand := func(s string) string {
		v, missing, input := ld.expandForeign(s, flavor)
		for _, name := range missing {
			problems = append(problems, fmt.Sprintf("environment variable %s is not set; using an empty string", name))
		}
		inputs = append(inputs, input...)
		return v
	}
	expandMap := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[k] = expand(v)
		}
		return out
	}
	s := MCPServer{
		Type:    MCPTransport(fs.Type),
		Command: expand(fs.Command),
		URL:     expand(fs.URL),
		Env:     expandMap(fs.Env),
		Headers: expandMap(fs.Headers),
		Cwd:     expand(fs.Cwd),
	}
	for _, a := range fs.Args {
		s.Args = append(s.Args, expand(a))
	}
	if s.Cwd != "" && !filepath.IsAbs(s.Cwd) {
		s.Cwd = filepath.Join(ld.root, s.Cwd)
	}
	if fs.EnvFile != "" {
		file := expand(fs.EnvFile)
		if !filepath.IsAbs(file) {
			file = filepath.Join(ld.root, file)
		}
		vars, err := readEnvFile(file)
		if err != nil {
			problems = append(problems, fmt.Sprintf("envFile: %v", err))
		}
		for k, v := range vars {
			if _, set := s.Env[k]; !set {
				if s.Env == nil {
					s.Env = map[string]string{}
				}
				s.Env[k] = v
			}
		}
	}
	if fs.Disabled {
		off := false
		s.Enabled = &off
	}
	if len(inputs) > 0 {
		slices.Sort(inputs)
		s.Problem = fmt.Sprintf("uses %s, which darman cannot prompt for: define this server in darman's config with the value from ${env:NAME}",
			strings.Join(slices.Compact(inputs), ", "))
		problems = append(problems, s.Problem)
	}
	return s, problems
}

// expandForeign expands a foreign file's placeholders: ${env:NAME}
// everywhere; ${NAME} and ${NAME:-default} in Claude's files;
// ${workspaceFolder} and ${userHome} in VS Code's. It returns the
// variables that were not set and the ${input:...} placeholders met,
// which stay as written.
func (ld *loader) expandForeign(s string, flavor foreignFlavor) (out string, missing, inputs []string) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), missing, inputs
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			b.WriteString(s)
			return b.String(), missing, inputs
		}
		b.WriteString(s[:i])
		expr := s[i+2 : i+end]
		whole := s[i : i+end+1]
		s = s[i+end+1:]
		env := func(name, def string, hasDef bool) {
			if v, ok := ld.dirs.lookup(name); ok {
				b.WriteString(v)
				return
			}
			if !hasDef {
				missing = append(missing, name)
			}
			b.WriteString(def)
		}
		switch kind, arg, colon := strings.Cut(expr, ":"); {
		case colon && kind == "env":
			env(arg, "", false)
		case flavor == flavorVSCode && colon && kind == "input":
			inputs = append(inputs, whole)
			b.WriteString(whole)
		case flavor == flavorVSCode && expr == "workspaceFolder":
			b.WriteString(ld.root)
		case flavor == flavorVSCode && expr == "userHome":
			h, _ := ld.dirs.home()
			b.WriteString(h)
		case flavor == flavorClaude && isIdent(kind) && !colon:
			env(kind, "", false)
		case flavor == flavorClaude && isIdent(kind) && strings.HasPrefix(arg, "-"):
			env(kind, arg[1:], true)
		default:
			b.WriteString(whole)
		}
	}
}

// readEnvFile reads KEY=VALUE lines (# comments, optional quotes), as VS
// Code's envFile.
func readEnvFile(path string) (map[string]string, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", path, pathErrCause(err))
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}
