package complete

import "strings"

// hashComment are the languages whose line comments start with "#".
var hashComment = map[string]bool{
	"python": true, "shellscript": true, "sh": true, "bash": true, "ruby": true, "perl": true, "r": true,
	"yaml": true, "toml": true, "makefile": true, "dockerfile": true, "elixir": true, "nix": true, "julia": true,
	"powershell": true, "coffeescript": true, "cmake": true,
}

// dashComment are the languages whose line comments start with "--".
var dashComment = map[string]bool{"lua": true, "sql": true, "haskell": true, "elm": true, "ada": true}

// lineComment is the language's line comment marker ("//" when unknown).
func lineComment(language string) string {
	switch {
	case hashComment[language]:
		return "#"
	case dashComment[language]:
		return "--"
	case language == "lisp" || language == "clojure" || language == "scheme" || language == "emacs-lisp":
		return ";;"
	case language == "html" || language == "xml" || language == "markdown":
		return "//"
	}
	return "//"
}

// inCommentOrString reports whether the end of line (the text of the
// cursor's line before the cursor) is inside a line comment or a string
// literal, by a scan of that line alone: block comments and strings that
// span lines are not seen.
func inCommentOrString(line, language string) bool {
	comment := lineComment(language)
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		if quote != 0 {
			switch {
			case c == '\\' && quote != '`':
				i++
			case c == quote:
				quote = 0
			}
			continue
		}
		switch {
		case c == '"' || c == '\'' || c == '`':
			if c == '\'' && isRuneLiteralLanguage(language) == false && i > 0 && isIdent(line[i-1]) {
				continue // an apostrophe in a word ("don't") of a language without char literals
			}
			quote = c
		case strings.HasPrefix(line[i:], comment):
			return true
		}
	}
	return quote != 0
}

func isRuneLiteralLanguage(language string) bool {
	switch language {
	case "go", "c", "cpp", "java", "rust", "csharp", "kotlin", "scala", "swift":
		return true
	}
	return false
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func isIdentStart(c byte) bool { return isIdent(c) && !(c >= '0' && c <= '9') }

// keywords are words never worth a definition lookup, over the common
// languages.
var keywords = map[string]bool{
	"if": true, "else": true, "for": true, "while": true, "return": true, "func": true, "function": true,
	"def": true, "class": true, "struct": true, "type": true, "var": true, "let": true, "const": true,
	"import": true, "package": true, "from": true, "in": true, "of": true, "range": true, "switch": true,
	"case": true, "default": true, "break": true, "continue": true, "go": true, "defer": true, "select": true,
	"chan": true, "map": true, "interface": true, "nil": true, "true": true, "false": true, "null": true,
	"None": true, "True": true, "False": true, "self": true, "this": true, "new": true, "public": true,
	"private": true, "static": true, "void": true, "int": true, "string": true, "bool": true, "error": true,
	"async": true, "await": true, "try": true, "catch": true, "except": true, "with": true, "as": true,
	"pub": true, "fn": true, "impl": true, "mut": true, "use": true, "mod": true, "and": true, "or": true,
	"not": true, "is": true, "lambda": true, "yield": true, "export": true, "extends": true, "any": true,
	"byte": true, "rune": true, "float64": true, "int64": true, "uint": true, "fallthrough": true, "goto": true,
}

// forIdents calls f with the start and end of each identifier of s.
func forIdents(s string, f func(i, j int)) {
	for i := 0; i < len(s); {
		if !isIdentStart(s[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isIdent(s[j]) {
			j++
		}
		f(i, j)
		i = j
	}
}

// ident is an identifier found in the text, at a byte offset.
type ident struct {
	name   string
	offset int
}
