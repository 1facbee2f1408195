package llm

import (
	"fmt"
	"sort"
	"strings"
)

// FIMTemplate is a model family's fill-in-the-middle tokens, for servers
// that take a raw prompt: the model was trained to write the hole's text
// after Middle.
type FIMTemplate struct {
	// Name is the family: "qwen", "deepseek", "starcoder2", "codellama",
	// "codestral".
	Name string
	// Prefix, Suffix and Middle are the sentinel tokens.
	Prefix, Suffix, Middle string
	// SuffixFirst puts the suffix before the prefix (Codestral's
	// [SUFFIX]…[PREFIX]… order).
	SuffixFirst bool
	// FileSep, when set, starts each context file ("<|file_sep|>path\n");
	// families without it get the files as comments in the prefix.
	FileSep string
	// Stop are the tokens that end the middle.
	Stop []string
}

// fimTemplates are the families darman knows (Continue's templates; the
// Qwen2.5-Coder technical report, arXiv 2409.12186, for Qwen's repo-level
// tokens).
var fimTemplates = map[string]FIMTemplate{
	"qwen": {Name: "qwen", Prefix: "<|fim_prefix|>", Suffix: "<|fim_suffix|>", Middle: "<|fim_middle|>",
		FileSep: "<|file_sep|>", Stop: []string{"<|endoftext|>", "<|fim_pad|>", "<|file_sep|>", "<|im_end|>"}},
	"deepseek": {Name: "deepseek", Prefix: "<｜fim▁begin｜>", Suffix: "<｜fim▁hole｜>", Middle: "<｜fim▁end｜>",
		Stop: []string{"<｜end▁of▁sentence｜>", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"}},
	"starcoder2": {Name: "starcoder2", Prefix: "<fim_prefix>", Suffix: "<fim_suffix>", Middle: "<fim_middle>",
		FileSep: "<file_sep>", Stop: []string{"<|endoftext|>", "<file_sep>", "<fim_prefix>", "<fim_suffix>"}},
	"codellama": {Name: "codellama", Prefix: "<PRE> ", Suffix: " <SUF>", Middle: " <MID>",
		Stop: []string{"<EOT>", "<PRE>", "<SUF>", "<MID>"}},
	"codestral": {Name: "codestral", Prefix: "[PREFIX]", Suffix: "[SUFFIX]", SuffixFirst: true,
		Stop: []string{"</s>", "[PREFIX]", "[SUFFIX]"}},
}

// FIMTemplateNames are the template names darman knows, sorted.
func FIMTemplateNames() []string {
	names := make([]string, 0, len(fimTemplates))
	for n := range fimTemplates {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupFIMTemplate returns the template of a name, or of a model id when
// name is "auto" (qwen2.5-coder → qwen, deepseek-coder → deepseek,
// starcoder2 → starcoder2, codellama → codellama, codestral → codestral).
// "" and "none" return nil: the server does FIM itself.
func LookupFIMTemplate(name, model string) (*FIMTemplate, error) {
	switch name {
	case "", "none":
		return nil, nil
	case "auto":
		m := strings.ToLower(model)
		for _, guess := range []struct{ has, name string }{
			{"qwen", "qwen"}, {"deepseek", "deepseek"}, {"starcoder", "starcoder2"},
			{"codellama", "codellama"}, {"code-llama", "codellama"}, {"codestral", "codestral"},
		} {
			if strings.Contains(m, guess.has) {
				t := fimTemplates[guess.name]
				return &t, nil
			}
		}
		return nil, fmt.Errorf("no FIM template is known for model %q; set completion.template to one of %v, or \"none\" if the server does FIM itself", model, FIMTemplateNames())
	}
	t, ok := fimTemplates[name]
	if !ok {
		return nil, fmt.Errorf("unknown FIM template %q; use one of %v, \"auto\" or \"none\"", name, FIMTemplateNames())
	}
	return &t, nil
}

// Render builds the raw prompt of a hole between prefix and suffix, with
// the context files before it.
func (t *FIMTemplate) Render(prefix, suffix string, files []FIMFile) string {
	var b strings.Builder
	n := len(prefix) + len(suffix) + 64
	for _, f := range files {
		n += len(f.Path) + len(f.Text) + 16
	}
	b.Grow(n)
	var ctx strings.Builder
	for _, f := range files {
		if t.FileSep != "" {
			ctx.WriteString(t.FileSep)
			ctx.WriteString(f.Path)
			ctx.WriteByte('\n')
			ctx.WriteString(f.Text)
			if !strings.HasSuffix(f.Text, "\n") {
				ctx.WriteByte('\n')
			}
		}
	}
	if t.SuffixFirst {
		b.WriteString(t.Suffix)
		b.WriteString(suffix)
		b.WriteString(t.Prefix)
		b.WriteString(ctx.String())
		b.WriteString(prefix)
		return b.String()
	}
	b.WriteString(ctx.String())
	b.WriteString(t.Prefix)
	b.WriteString(prefix)
	b.WriteString(t.Suffix)
	b.WriteString(suffix)
	b.WriteString(t.Middle)
	return b.String()
}

// FIMCarriesFiles reports whether a request of this API and template
// sends FIMRequest.Files to the model (llama.cpp's input_extra, a
// template's file separators); when it does not, the caller puts the
// context into the prefix, as comments of the file's language.
func FIMCarriesFiles(api FIMAPI, t *FIMTemplate) bool {
	if t != nil {
		return t.FileSep != "" && api != FIMMistral
	}
	return api == FIMInfill
}
