package diagnostics

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/darman-dev/darman/internal/config"
)

// server is one language server darman knows how to run: a built-in entry,
// possibly changed by the configuration, or one the configuration adds.
type server struct {
	// name is the key in the configuration's lsp map (go, rust,
	// typescript, python, c, or the user's own).
	name       string
	commands   []candidate
	extensions []string
	// rootMarkers are the files whose nearest directory, walking up from
	// a file, is that file's workspace root for this server.
	rootMarkers []string
	env         map[string]string
	initOptions json.RawMessage
	// settings answers workspace/configuration.
	settings json.RawMessage
	// depsSettings, if set, are merged over settings for a second
	// instance that searches the dependencies' symbols too, for the
	// queries that ask for them (SymbolQuery.Dependencies): the first
	// searches only the workspace, several times faster (gopls: 10-20 ms
	// a query on this repository instead of 80-110, whose dependencies
	// include a large SDK).
	depsSettings json.RawMessage
	// settle is how long to wait for a further round after a pushed set
	// (see lsp.WaitOptions.Settle).
	settle time.Duration
	// wait, if set, replaces Options.Wait for this server's files
	// (lsp.<name>.diagnosticsWait).
	wait time.Duration
	// idle, if set, replaces Options.IdleTimeout for this server
	// (lsp.<name>.idleTimeout).
	idle     time.Duration
	disabled bool
	// indexesWorkspace says the server loads and indexes the whole
	// workspace from its root alone (gopls), so workspace-wide queries
	// need not open a file first: others may know a project only through
	// a file open in it (typescript-language-server's tsserver answers
	// "No Project" before), and waiting for that file's diagnostics would
	// cost gopls a type check the query does not need.
	indexesWorkspace bool
	// install tells a person how to get the server.
	install string
}

// candidate is one way to run a server; the first whose executable is
// found wins.
type candidate struct {
	argv []string
	// when, if set, must accept the root for this candidate to be used.
	when func(root string) bool
	// initOptions are darman's initializationOptions for this program;
	// the configured ones merge over them.
	initOptions json.RawMessage
}

func builtinServers() []*server {
	return []*server{
		{
			name:             "go",
			commands:         []candidate{{argv: []string{"gopls"}}},
			extensions:       []string{".go"},
			rootMarkers:      []string{"go.work", "go.mod"},
			indexesWorkspace: true,
			// One full pass per change instead of a fast pass on the
			// changed package and the rest a second later, so the errors
			// an edit causes in other packages arrive with the first set.
			settings:     json.RawMessage(`{"gopls":{"diagnosticsDelay":"0s","symbolScope":"workspace"}}`),
			depsSettings: json.RawMessage(`{"gopls":{"symbolScope":"all"}}`),
			install:      "go install golang.org/x/tools/gopls@latest",
		},
		{
			name:        "rust",
			commands:    []candidate{{argv: []string{"rust-analyzer"}}},
			extensions:  []string{".rs"},
			rootMarkers: []string{"Cargo.toml"},
			install:     "rustup component add rust-analyzer",
		},
		{
			name: "typescript",
			commands: []candidate{
				// TypeScript 7's native compiler serves LSP itself.
				{argv: []string{"node_modules/.bin/tsc", "--lsp", "--stdio"}, when: hasTypeScript7},
				// One tsserver, not a second syntax-only one (an editor's
				// answers while the project loads; darman's queries all go
				// to the semantic server), and no typings installer (it
				// fetches @types packages from npm): 250 MiB of the 470
				// three language servers took (docs/benchmarks.md).
				{
					argv:        []string{"typescript-language-server", "--stdio"},
					initOptions: json.RawMessage(`{"disableAutomaticTypingAcquisition":true,"tsserver":{"useSyntaxServer":"never"}}`),
				},
			},
			extensions:  []string{".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"},
			rootMarkers: []string{"tsconfig.json", "jsconfig.json", "package.json"},
			// typescript-language-server publishes each kind of
			// diagnostic (syntax, semantic, suggestion) as it comes,
			// debounced by 50 ms, and never tags a set with a version:
			// the semantic pass can come well after the syntax pass.
			// darman asks its tsserver instead (lsp's pullTSServer);
			// the settle time is for a server that does not offer the
			// pass-through command.
			settle:  300 * time.Millisecond,
			install: "npm install typescript-language-server typescript",
		},
		{
			name: "python",
			commands: []candidate{
				{argv: []string{"pyright-langserver", "--stdio"}},
				{argv: []string{"basedpyright-langserver", "--stdio"}},
			},
			extensions:  []string{".py", ".pyi"},
			rootMarkers: []string{"pyproject.toml", "pyrightconfig.json", "setup.py", "setup.cfg", "requirements.txt"},
			install:     "npm install pyright (or pip install basedpyright)",
		},
		{
			name:        "c",
			commands:    []candidate{{argv: []string{"clangd"}}},
			extensions:  []string{".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"},
			rootMarkers: []string{"compile_commands.json", "compile_flags.txt", ".clangd"},
			install:     "apt-get install clangd (or your OS's package)",
		},
	}
}

// hasTypeScript7 reports whether root has TypeScript 7 or later installed
// locally.
func hasTypeScript7(root string) bool {
	b, err := os.ReadFile(filepath.Join(root, "node_modules", "typescript", "package.json"))
	if err != nil {
		return false
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &pkg) != nil {
		return false
	}
	major, _, _ := strings.Cut(pkg.Version, ".")
	n, err := strconv.Atoi(major)
	return err == nil && n >= 7
}

// servers merges the configuration over the built-in table. A configured
// command that differs from darman's default replaces the built-in
// candidates (and their initialization options); extensions, env, root
// markers, the diagnostics wait, the idle timeout and disabled apply as
// given; settings and initialization options merge over darman's
// defaults.
func servers(cfg map[string]config.LSP) ([]*server, error) {
	defaults := config.Default().LSP
	out := builtinServers()
	byName := map[string]*server{}
	for _, s := range out {
		byName[s.name] = s
	}
	for _, name := range slices.Sorted(maps.Keys(cfg)) {
		c := cfg[name]
		s, builtin := byName[name]
		if !builtin {
			s = &server{name: name, install: "check the command in darman's configuration (lsp." + name + ".command)"}
			out = append(out, s)
			byName[name] = s
		}
		s.disabled = c.Disabled
		if c.Disabled {
			continue
		}
		if len(c.Command) > 0 && (!builtin || !slices.Equal(c.Command, defaults[name].Command)) {
			if c.Command[0] == "" {
				return nil, fmt.Errorf("lsp.%s.command: the executable must not be empty", name)
			}
			s.commands = []candidate{{argv: slices.Clone(c.Command)}}
		}
		if len(s.commands) == 0 {
			return nil, fmt.Errorf("lsp.%s: a command is required, e.g. [\"my-server\", \"--stdio\"] (or set \"disabled\": true)", name)
		}
		if len(c.Extensions) > 0 {
			s.extensions = nil
			for _, e := range c.Extensions {
				if !strings.HasPrefix(e, ".") {
					return nil, fmt.Errorf("lsp.%s.extensions: %q must start with a dot, e.g. \".go\"", name, e)
				}
				s.extensions = append(s.extensions, strings.ToLower(e))
			}
		}
		if len(s.extensions) == 0 {
			return nil, fmt.Errorf("lsp.%s.extensions: at least one file extension is required, e.g. [\".go\"]", name)
		}
		if c.Env != nil {
			s.env = c.Env
		}
		if c.InitializationOptions != nil {
			s.initOptions = c.InitializationOptions
		}
		if c.DiagnosticsWait > 0 {
			s.wait = c.DiagnosticsWait
		}
		if c.IdleTimeout > 0 {
			s.idle = c.IdleTimeout
		}
		if len(c.RootMarkers) > 0 {
			s.rootMarkers = slices.Clone(c.RootMarkers)
		}
		if len(c.Settings) > 0 {
			merged, err := mergeJSON(s.settings, c.Settings)
			if err != nil {
				return nil, fmt.Errorf("lsp.%s.settings: %v", name, err)
			}
			s.settings = merged
		}
	}
	return out, nil
}

// mergeJSON merges over into base: objects key by key at every depth, any
// other value replaced.
func mergeJSON(base, over json.RawMessage) (json.RawMessage, error) {
	var b, o any
	if len(base) > 0 {
		if err := json.Unmarshal(base, &b); err != nil {
			return nil, err
		}
	}
	if err := json.Unmarshal(over, &o); err != nil {
		return nil, err
	}
	return json.Marshal(mergeValues(b, o))
}

func mergeValues(base, over any) any {
	bm, ok1 := base.(map[string]any)
	om, ok2 := over.(map[string]any)
	if !ok1 || !ok2 {
		return over
	}
	for k, v := range om {
		bm[k] = mergeValues(bm[k], v)
	}
	return bm
}

// languageIDs maps an extension to the LSP language identifier.
var languageIDs = map[string]string{
	".go": "go", ".rs": "rust",
	".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
	".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact",
	".py": "python", ".pyi": "python",
	".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
}

func languageID(path string) string {
	ext := strings.ToLower(filepath.Ext(path))
	if id, ok := languageIDs[ext]; ok {
		return id
	}
	return strings.TrimPrefix(ext, ".")
}

// resolve finds the command to run for root: a program named without a
// directory is looked up in root/node_modules/.bin, then on PATH; one with
// a relative directory is relative to root.
func (s *server) resolve(root string, lookPath func(string) (string, error)) ([]string, error) {
	argv, _, err := s.launch(root, lookPath)
	return argv, err
}

// launch is resolve that also returns the initializationOptions to send:
// the configured ones merged over the found candidate's.
func (s *server) launch(root string, lookPath func(string) (string, error)) ([]string, json.RawMessage, error) {
	var tried []string
	for _, c := range s.commands {
		if c.when != nil && !c.when(root) {
			continue
		}
		prog := c.argv[0]
		tried = append(tried, prog)
		var found string
		switch {
		case filepath.IsAbs(prog):
			if isExecutable(prog) {
				found = prog
			}
		case strings.ContainsRune(prog, filepath.Separator) || strings.ContainsRune(prog, '/'):
			if p := filepath.Join(root, prog); isExecutable(p) {
				found = p
			}
		default:
			if p := filepath.Join(root, "node_modules", ".bin", prog); isExecutable(p) {
				found = p
			} else if p, err := lookPath(prog); err == nil {
				found = p
			}
		}
		if found != "" {
			init := c.initOptions
			if len(s.initOptions) > 0 {
				if len(init) == 0 {
					init = s.initOptions
				} else if merged, err := mergeJSON(init, s.initOptions); err == nil {
					init = merged
				} else {
					return nil, nil, fmt.Errorf("lsp.%s.initializationOptions: %v", s.name, err)
				}
			}
			return append([]string{found}, c.argv[1:]...), init, nil
		}
	}
	return nil, nil, fmt.Errorf("%w: %s was not found on PATH (%s)", ErrNotInstalled, strings.Join(tried, " or "), s.install)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// findRoot walks up from path's directory to the nearest directory holding
// one of the markers, no further than limit when path is inside limit. With
// no marker found it is limit, or path's directory for a path outside
// limit.
func findRoot(path, limit string, markers []string) string {
	dir := filepath.Dir(path)
	inside := within(limit, path)
	for d := dir; ; {
		for _, m := range markers {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return d
			}
		}
		parent := filepath.Dir(d)
		if (inside && d == limit) || parent == d {
			break
		}
		d = parent
	}
	if inside {
		return limit
	}
	return dir
}

// within reports whether path is dir or inside it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func sortedServers(list []*server) []*server {
	out := slices.Clone(list)
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
