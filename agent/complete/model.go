package complete

import (
	"context"
	"strings"

	"github.com/darman-dev/darman/agent/llm"
)

// Prompt is what a model is asked for one completion.
type Prompt struct {
	// Path is the file's path relative to the workspace (slash-separated);
	// Language its LSP language id.
	Path, Language string
	// Prefix and Suffix are the windows around the cursor.
	Prefix, Suffix string
	// Files are the context snippets (other buffers, definitions).
	Files []llm.FIMFile
	// SingleLine asks for the rest of the line only.
	SingleLine bool
	MaxTokens  int
	// Temperature nil leaves the server's default.
	Temperature *float64
	Stop        []string
}

// Model answers completions. Complete streams the hole's text to yield,
// piece by piece, and stops reading (closing the connection) as soon as
// yield returns false; it returns the usage the server reported.
type Model interface {
	Complete(ctx context.Context, p *Prompt, yield func(string) bool) (llm.Usage, error)
	// Info describes the model: its id, for darman.status and doctor, and
	// its prices.
	Info() llm.ModelInfo
	// Describe says how the model is reached ("ollama /api/generate").
	Describe() string
}

// FIMModel is a model behind a fill-in-the-middle API.
type FIMModel struct {
	Client *llm.Client
	API    llm.FIMAPI
	// Model is the id the server knows.
	Model string
	// Template, when set, is sent as a raw prompt (see llm.FIMRequest).
	Template *llm.FIMTemplate
	// NoStream asks for whole answers.
	NoStream bool
}

// Info implements Model.
func (m *FIMModel) Info() llm.ModelInfo { return m.Client.Model(m.Model) }

// Describe implements Model.
func (m *FIMModel) Describe() string {
	d := m.Client.Name() + "/" + m.Model + " over " + string(m.API)
	if m.Template != nil {
		d += " with the " + m.Template.Name + " template"
	}
	return d
}

// Complete implements Model.
func (m *FIMModel) Complete(ctx context.Context, p *Prompt, yield func(string) bool) (llm.Usage, error) {
	req := &llm.FIMRequest{API: m.API, Model: m.Model, Prefix: p.Prefix, Suffix: p.Suffix, Template: m.Template,
		MaxTokens: p.MaxTokens, Temperature: p.Temperature, Stop: p.Stop, NoStream: m.NoStream}
	if llm.FIMCarriesFiles(m.API, m.Template) {
		req.Files = p.Files
	} else if len(p.Files) > 0 {
		req.Prefix = filesAsComments(p.Language, p.Path, p.Files) + p.Prefix
	}
	s, err := m.Client.FIM(ctx, req)
	if err != nil {
		return llm.Usage{}, err
	}
	defer s.Close()
	for s.Next() {
		if !yield(s.Text()) {
			return s.Usage(), nil
		}
	}
	return s.Usage(), s.Err()
}

// ChatModel is a chat model (Claude, GPT, any chat model) asked to fill a
// hole with a short prompt: for providers without a FIM API.
type ChatModel struct {
	Provider llm.Provider
	// Name is the provider's name, for Describe.
	Name  string
	Model string
}

// Info implements Model.
func (m *ChatModel) Info() llm.ModelInfo { return m.Provider.Model(m.Model) }

// Describe implements Model.
func (m *ChatModel) Describe() string {
	return m.Name + "/" + m.Model + " over chat (hole-filling prompt)"
}

// holeMarker marks the cursor in the chat prompt.
const holeMarker = "<|CURSOR|>"

// chatSystem is the hole-filling instruction: short, since every
// keystroke's request pays for it.
const chatSystem = "You are a code completion engine. The user sends a file with the marker " + holeMarker +
	" where the cursor is. Reply with only the text to insert at the marker: no explanation, no Markdown fence, " +
	"no repetition of the text before or after it. Reply with nothing if nothing fits."

// Complete implements Model.
func (m *ChatModel) Complete(ctx context.Context, p *Prompt, yield func(string) bool) (llm.Usage, error) {
	var b strings.Builder
	for _, f := range p.Files {
		b.WriteString("Context from ")
		b.WriteString(f.Path)
		b.WriteString(":\n")
		b.WriteString(f.Text)
		if !strings.HasSuffix(f.Text, "\n") {
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	b.WriteString("File ")
	b.WriteString(p.Path)
	b.WriteString(":\n")
	b.WriteString(p.Prefix)
	b.WriteString(holeMarker)
	b.WriteString(p.Suffix)
	if p.SingleLine {
		b.WriteString("\n\nComplete the line at the marker only.")
	}
	req := &llm.Request{Model: m.Model, System: chatSystem, MaxOutputTokens: p.MaxTokens, Temperature: p.Temperature,
		// A prompt that changes at every keystroke is not worth a cache
		// write.
		Cache:    llm.CacheOptions{Disabled: true},
		Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text{Text: b.String()}}}}}
	s := m.Provider.Stream(ctx, req)
	defer s.Close()
	var usage llm.Usage
	fence := fenceStripper{}
	for s.Next() {
		ev := s.Event()
		switch ev.Kind {
		case llm.EventTextDelta:
			if t := fence.feed(ev.Text); t != "" && !yield(t) {
				return usage, nil
			}
		case llm.EventUsage:
			usage = ev.Usage
		}
	}
	return usage, s.Err()
}

// fenceStripper drops a Markdown fence a chat model puts around its
// answer despite being told not to: an opening ``` line, and everything
// from a closing ``` on.
type fenceStripper struct {
	head   strings.Builder
	opened bool // the first line was read
	closed bool
}

func (f *fenceStripper) feed(t string) string {
	if f.closed {
		return ""
	}
	if !f.opened {
		f.head.WriteString(t)
		h := f.head.String()
		if !strings.HasPrefix(h, "`") && !strings.HasPrefix("```", h) {
			f.opened = true
			return f.cut(h)
		}
		nl := strings.IndexByte(h, '\n')
		if nl < 0 {
			return ""
		}
		f.opened = true
		return f.cut(h[nl+1:])
	}
	return f.cut(t)
}

func (f *fenceStripper) cut(t string) string {
	if i := strings.Index(t, "```"); i >= 0 {
		f.closed = true
		return strings.TrimSuffix(t[:i], "\n")
	}
	return t
}

// filesAsComments writes context files as comments of the language, for
// FIM APIs that take nothing but a prefix and a suffix.
func filesAsComments(language, path string, files []llm.FIMFile) string {
	c := lineComment(language)
	var b strings.Builder
	for _, f := range files {
		b.WriteString(c)
		b.WriteString(" Context from ")
		b.WriteString(f.Path)
		b.WriteString(":\n")
		for line := range strings.Lines(f.Text) {
			b.WriteString(c)
			b.WriteByte(' ')
			b.WriteString(line)
			if !strings.HasSuffix(line, "\n") {
				b.WriteByte('\n')
			}
		}
	}
	if b.Len() > 0 {
		b.WriteString(c)
		b.WriteString(" File ")
		b.WriteString(path)
		b.WriteString("\n")
	}
	return b.String()
}
