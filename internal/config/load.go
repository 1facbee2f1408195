package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
)

// Flags are the command-line values that override every file. An empty
// string means the flag was not given.
type Flags struct {
	Model, SmallModel, DataDir, LogLevel, LogFile string
}

// Options control [Load]. The zero value loads for the current directory
// from the real environment.
type Options struct {
	// WorkspaceRoot is where the search for project files starts; "" means
	// the current directory.
	WorkspaceRoot string
	// LookupEnv reads environment variables (DARMAN_*, XDG_*, HOME and
	// ${env:...}); nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// UserConfigDir is the directory holding the user's config.json; ""
	// means the OS default (see [UserDir]).
	UserConfigDir string
	// Flags override everything else.
	Flags Flags
	// Trust decides whether the workspace's widening settings apply (see
	// [WorkspaceSources]): it is given the workspace and what it would
	// widen (which may be nothing: the workspace's agent files, read
	// elsewhere, follow the same decision through
	// Config.WorkspaceTrusted), and reports whether the user trusted it.
	// It is called once per Load. nil trusts a workspace only when it
	// widens nothing: its files may only narrow.
	Trust func(Workspace) bool
}

// Loaded is the result of [Load].
type Loaded struct {
	Config Config
	// Sources lists every file considered, in the order applied.
	Sources []Source
	// Warnings are things worth telling the user that did not stop the
	// load, such as a ${env:NAME} whose variable is not set.
	Warnings []string
	// Trust is what was made of the workspace's widening settings.
	Trust TrustState
}

// Source is one place configuration was looked for.
type Source struct {
	// Path is the file's absolute path, or DARMAN_CONFIG_CONTENT.
	Path string
	// Layer is "user", "project" or "env".
	Layer string
	// Found reports whether the file exists.
	Found bool
}

// The environment variables Load reads.
const (
	EnvConfig        = "DARMAN_CONFIG"
	EnvConfigContent = "DARMAN_CONFIG_CONTENT"
	EnvModel         = "DARMAN_MODEL"
	EnvSmallModel    = "DARMAN_SMALL_MODEL"
	EnvDataDir       = "DARMAN_DATA_DIR"
	EnvLogLevel      = "DARMAN_LOG_LEVEL"
	EnvLogFile       = "DARMAN_LOG_FILE"
)

// Load reads and merges every configuration layer (see the package
// documentation for the order). When anything is wrong it returns an
// [*Error] listing every problem found, and no configuration.
func Load(opts Options) (*Loaded, error) {
	d := platformDirs(opts.LookupEnv)
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	root := opts.WorkspaceRoot
	if root == "" {
		root = cwd
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, fmt.Errorf("load config: workspace root: %w", err)
	}

	cfg := defaults(d)
	ld := &loader{dirs: d, root: root, origins: map[string]string{}, projectSource: map[string]bool{}}
	ld.target = reflect.ValueOf(&cfg).Elem()

	userDir := opts.UserConfigDir
	if userDir == "" {
		userDir, err = d.user()
	} else {
		userDir, err = filepath.Abs(userDir)
	}
	if err != nil {
		ld.ps.warnings = append(ld.ps.warnings, "no user config file: "+err.Error())
	} else {
		ld.file("user", filepath.Join(userDir, "config.json"), false)
	}

	// The workspace's files are read first, for what they would widen;
	// they apply in their place, after the user's file.
	var project []projectFile
	for _, dir := range projectDirs(root) {
		for _, path := range []string{filepath.Join(dir, ".darman", "config.json"), filepath.Join(dir, "darman.json")} {
			project = append(project, ld.readProject(path))
		}
	}
	items := ld.projectItems(project)
	items = append(items, ld.foreignItems()...)
	if opts.Trust != nil {
		ld.trusted = opts.Trust(Workspace{Root: root, Items: items})
	} else {
		// A workspace that widens nothing has nothing to trust.
		ld.trusted = len(items) == 0
	}
	ld.trust = TrustState{Trusted: ld.trusted, Items: items}
	cfg.WorkspaceTrusted = ld.trusted
	for _, pf := range project {
		ld.applyProject(pf)
	}

	if p, ok := d.env(EnvConfig); ok {
		if abs, err := d.resolve(cwd, p); err != nil {
			ld.ps.add(Problem{Source: EnvConfig, Message: fmt.Sprintf("cannot expand %q: %v", p, err), Err: err})
		} else {
			ld.file("env", abs, true)
		}
	}
	if c, ok := d.env(EnvConfigContent); ok {
		ld.sources = append(ld.sources, Source{Path: EnvConfigContent, Layer: "env", Found: true})
		ld.content(EnvConfigContent, cwd, []byte(c))
	}

	single := func(name string) *node {
		if v, ok := d.env(name); ok {
			return stringNode(v)
		}
		return nil
	}
	ld.apply(EnvModel, cwd, object(member{"model", single(EnvModel)}))
	ld.apply(EnvSmallModel, cwd, object(member{"smallModel", single(EnvSmallModel)}))
	ld.apply(EnvDataDir, cwd, object(member{"dataDir", single(EnvDataDir)}))
	ld.apply(EnvLogLevel, cwd, object(member{"log", object(member{"level", single(EnvLogLevel)})}))
	ld.apply(EnvLogFile, cwd, object(member{"log", object(member{"file", single(EnvLogFile)})}))

	flag := func(v string) *node {
		if v == "" {
			return nil
		}
		return stringNode(v)
	}
	f := opts.Flags
	ld.apply("command line", cwd, object(
		member{"model", flag(f.Model)},
		member{"smallModel", flag(f.SmallModel)},
		member{"dataDir", flag(f.DataDir)},
		member{"log", object(member{"level", flag(f.LogLevel)}, member{"file", flag(f.LogFile)})},
	))

	if ld.ps.err() == nil {
		ld.check(&cfg)
		ld.foreignMCP(&cfg)
		ld.checkHooks(&cfg)
		ld.foreignHooks(&cfg)
	}
	if err := ld.ps.err(); err != nil {
		return nil, err
	}
	return &Loaded{Config: cfg, Sources: ld.sources, Warnings: ld.ps.warnings, Trust: ld.trust}, nil
}

// loader applies layers, in order, onto one Config.
type loader struct {
	dirs    dirs
	root    string
	target  reflect.Value // the Config being built
	ps      problems
	sources []Source
	origins map[string]string
	// trusted says whether the workspace's widening settings apply;
	// trust is what Load reports of them.
	trusted bool
	trust   TrustState
	// projectSource holds the names of the workspace's config files as
	// problems and origins name them.
	projectSource map[string]bool
}

// projectDirs returns the directories whose project files apply, outermost
// first: the workspace root and its parents, up to and including the first
// one that holds .git.
func projectDirs(root string) []string {
	var dirs []string
	for dir := root; ; {
		dirs = append(dirs, dir)
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	slices.Reverse(dirs)
	return dirs
}

// maxFileSize bounds a config file; a larger one is not a config file.
const maxFileSize = 4 << 20

// readFile reads a config file, refusing what could hang or exhaust the
// process: named pipes, devices, directories and very large files.
func readFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, err
	case fi.IsDir():
		return nil, errors.New("is a directory")
	case !fi.Mode().IsRegular():
		return nil, errors.New("not a regular file")
	case fi.Size() > maxFileSize:
		return nil, errors.New("larger than 4 MiB")
	}
	return os.ReadFile(path)
}

// file applies one config file. A missing file is skipped unless required.
func (ld *loader) file(layerName, path string, required bool) {
	data, err := readFile(path)
	found := err == nil || !errors.Is(err, fs.ErrNotExist)
	ld.sources = append(ld.sources, Source{Path: path, Layer: layerName, Found: found})
	source := ld.display(layerName, path)
	switch {
	case err == nil:
		ld.content(source, filepath.Dir(path), data)
	case !found && !required:
	case !found:
		// Only DARMAN_CONFIG names a file that must exist.
		ld.ps.add(Problem{Source: EnvConfig, Message: fmt.Sprintf("cannot read %s: %v", path, pathErrCause(err)), Err: err})
	default:
		ld.ps.add(Problem{Source: source, Message: fmt.Sprintf("cannot read the file: %v", pathErrCause(err)), Err: err})
	}
}

// display names a file in problems: project files relative to the
// workspace root when they are inside it, everything else in full.
func (ld *loader) display(layerName, path string) string {
	if layerName == "project" {
		if rel, err := filepath.Rel(ld.root, path); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return path
}

// content parses, substitutes and applies one JSONC document.
func (ld *loader) content(source, dir string, data []byte) {
	tree, serr := parse(data)
	if serr != nil {
		ld.ps.add(Problem{Source: source, Line: serr.line, Column: serr.column, Message: "invalid JSON: " + serr.msg})
		return
	}
	l := ld.layer(source, dir)
	l.substitute("", tree)
	l.decode("", tree, ld.target, fieldOpts{})
}

// apply decodes a tree built from environment variables or flags; their
// values are taken literally, without substitution.
func (ld *loader) apply(source, dir string, tree *node) {
	if tree == nil {
		return
	}
	ld.layer(source, dir).decode("", tree, ld.target, fieldOpts{})
}

func (ld *loader) layer(source, dir string) *layer {
	return &layer{source: source, dir: dir, dirs: ld.dirs, ps: &ld.ps, origins: ld.origins}
}
