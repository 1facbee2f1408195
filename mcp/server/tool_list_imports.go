package server

import (
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/diagnostics"
	"github.com/darman-dev/darman/internal/lazyre"
)

// ListImportsInput is the list_imports tool's input.
type ListImportsInput struct {
	Path string `json:"path" jsonschema:"the file, relative to the project root" example:"\"cmd/darman/main.go\""`
}

// Import is one import of a file.
type Import struct {
	Module string `json:"module" jsonschema:"what is imported, as written (a package path, a module specifier)"`
	Name   string `json:"name,omitempty" jsonschema:"the local name it is bound to, when the file gives one"`
	Line   int    `json:"line"`
	// Files are where the language server says it resolves to.
	Files []string `json:"files" jsonschema:"the files it resolves to (relative to the root when inside it); empty when the server cannot tell"`
}

// ListImportsOutput is the list_imports tool's output.
type ListImportsOutput struct {
	envelope
	Path    string   `json:"path"`
	Imports []Import `json:"imports"`
	Note    string   `json:"note,omitempty"`
}

func (s *Server) addListImports() {
	addTool(s, &mcp.Tool{
		Name:        "list_imports",
		Title:       "A file's imports",
		Description: "Lists what a file imports (Go, TypeScript/JavaScript, Python) and, where its language server can tell, the files each import resolves to.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, s.listImports)
}

// importSpec is an import found in the text, with the position inside
// its specifier that a definition request resolves.
type importSpec struct {
	Import
	pos diagnostics.Position
}

func (s *Server) listImports(ctx context.Context, in ListImportsInput) (ListImportsOutput, string, error) {
	out := ListImportsOutput{Imports: []Import{}}
	file, err := s.root.Resolve(in.Path)
	if err != nil {
		return out, "", err
	}
	out.Path = s.root.Rel(file)
	data, err := s.overlay.ReadFile(ctx, file)
	if err != nil {
		return out, "", toolErrorf(CodeInvalidInput, "%s: %v", in.Path, err)
	}
	specs, err := parseImports(file, string(data))
	if err != nil {
		return out, "", err
	}
	resolvedAny := false
	var b strings.Builder
	for _, sp := range specs {
		imp := sp.Import
		imp.Files = []string{}
		locs, err := s.pool.Definition(ctx, file, sp.pos)
		if err == nil {
			seen := map[string]bool{}
			for _, l := range locs {
				p := s.root.Rel(l.Path)
				if !seen[p] && l.Path != file {
					seen[p] = true
					imp.Files = append(imp.Files, p)
				}
			}
		} else if !resolvedAny && len(out.Imports) == 0 {
			s.log.Debug("mcp: list_imports could not resolve", "path", file, "err", err)
		}
		resolvedAny = resolvedAny || len(imp.Files) > 0
		out.Imports = append(out.Imports, imp)
		fmt.Fprintf(&b, "L%d %s", imp.Line, imp.Module)
		if imp.Name != "" {
			fmt.Fprintf(&b, " as %s", imp.Name)
		}
		if len(imp.Files) > 0 {
			fmt.Fprintf(&b, " -> %s", strings.Join(imp.Files, ", "))
		}
		b.WriteString("\n")
	}
	if len(specs) == 0 {
		b.WriteString(out.Path + " imports nothing")
	} else if !resolvedAny {
		out.Note = "the language server did not resolve any import to files (it may not support it, or the imports are missing)"
		b.WriteString(out.Note)
	}
	return out, strings.TrimRight(b.String(), "\n"), nil
}

var (
	jsImport = lazyre.New(`(?m)^\s*(?:import|export)\s[^'"]*?(?:from\s*)?(['"])([^'"\n]+)['"]|\brequire\(\s*(['"])([^'"\n]+)['"]\s*\)|\bimport\(\s*(['"])([^'"\n]+)['"]\s*\)`)
	pyImport = lazyre.New(`(?m)^[ \t]*(?:from[ \t]+([.\w]+)[ \t]+import\b|import[ \t]+([.\w]+(?:[ \t]*,[ \t]*[.\w]+)*))`)
)

// parseImports finds a file's imports by its extension.
func parseImports(file, text string) ([]importSpec, error) {
	switch filepath.Ext(file) {
	case ".go":
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, text, parser.ImportsOnly)
		if f == nil {
			return nil, toolErrorf(CodeInvalidInput, "%s does not parse as Go: %v", filepath.Base(file), err)
		}
		var out []importSpec
		for _, is := range f.Imports {
			path, _ := strconv.Unquote(is.Path.Value)
			p := fset.Position(is.Path.Pos())
			imp := Import{Module: path, Line: p.Line}
			if is.Name != nil {
				imp.Name = is.Name.Name
			}
			out = append(out, importSpec{Import: imp, pos: diagnostics.Position{Line: p.Line, Column: runeCol(text, p.Offset) + 2}}) // inside the quotes
		}
		return out, nil
	case ".ts", ".tsx", ".js", ".jsx", ".mts", ".cts", ".mjs", ".cjs":
		var out []importSpec
		for _, m := range jsImport.FindAllStringSubmatchIndex(text, -1) {
			for _, k := range []int{2, 4, 6} { // the specifier groups
				start, end := m[2*k], m[2*k+1]
				if start < 0 {
					continue
				}
				line := strings.Count(text[:start], "\n") + 1
				out = append(out, importSpec{Import: Import{Module: text[start:end], Line: line}, pos: diagnostics.Position{Line: line, Column: runeCol(text, start) + 1}})
			}
		}
		return out, nil
	case ".py", ".pyi":
		var out []importSpec
		for _, m := range pyImport.FindAllStringSubmatchIndex(text, -1) {
			for _, g := range []int{2, 4} {
				if m[g] < 0 {
					continue
				}
				off := m[g]
				for _, mod := range strings.Split(text[m[g]:m[g+1]], ",") {
					lead := len(mod) - len(strings.TrimLeft(mod, " \t"))
					name := strings.TrimSpace(mod)
					start := off + lead
					line := strings.Count(text[:start], "\n") + 1
					out = append(out, importSpec{Import: Import{Module: name, Line: line}, pos: diagnostics.Position{Line: line, Column: runeCol(text, start) + 1}})
					off += len(mod) + 1
				}
			}
		}
		return out, nil
	}
	return nil, toolErrorf(CodeInvalidInput, "list_imports reads Go, TypeScript/JavaScript and Python files; %s is none of them", filepath.Base(file))
}

// runeCol is the 0-based column, in characters, of a byte offset.
func runeCol(text string, off int) int {
	start := strings.LastIndexByte(text[:off], '\n') + 1
	return utf8.RuneCountInString(text[start:off])
}
