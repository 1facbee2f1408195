// Command fakels is a tiny language server for darman's tests: it speaks
// just enough LSP over stdio to be driven, and misbehaves on request.
//
// Every open document is scanned on each change: a line containing ERROR
// yields an error diagnostic starting at that word (its character counted
// in the negotiated position encoding, with a code description and the
// document's first line as related information), WARN a warning, SYNTAX an error
// that the fast first round already reports (see -rounds).
//
// With -tsserver it also offers typescript-language-server's
// typescript.tsserverRequest command and answers tsserver's synchronous
// diagnostic requests through it as tsserver would (1-based lines and
// UTF-16 offsets): SYNTAX as a syntactic error, ERROR as a semantic error
// (code 2322, the document's first line as related information), WARN as
// a semantic warning, "unused" as a suggestion (code 6133).
//
// It writes what it received, one line per message ("recv METHOD" or
// "answer METHOD JSON" for answers to its own requests), to the file named
// by -log, so tests can check what darman sent.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

var (
	crashOn    = flag.String("crash-on", "", "exit with status 3 on receiving this method")
	silent     = flag.Bool("silent", false, "read everything, answer nothing")
	stopOn     = flag.String("stop-reading-on", "", "stop reading stdin after receiving this method")
	garbage    = flag.Bool("garbage", false, "write garbage instead of answering initialize")
	garbageOn  = flag.String("garbage-on", "", "write garbage on receiving this method")
	flood      = flag.Int("flood", 0, "on each change, publish this many sets for other URIs")
	floodItems = flag.Int("flood-items", 0, "on each change, add this many diagnostics to the set")
	versioned  = flag.Bool("versioned", true, "tag publishes with the document version")
	rounds     = flag.Int("rounds", 1, "publish this many rounds per change; only the last has the ERROR lines")
	roundDelay = flag.Duration("round-delay", 50*time.Millisecond, "time between rounds")
	pull       = flag.Bool("pull", false, "offer pull diagnostics and publish nothing")
	regPull    = flag.Bool("register-pull", false, "register pull diagnostics dynamically instead of offering them")
	encoding   = flag.String("encoding", "", "choose this position encoding when the client offers it")
	child      = flag.Bool("child", false, "start a long sleep in the same process group")
	logPath    = flag.String("log", "", "append received methods to this file")
	progress   = flag.Duration("progress", 0, "wrap each change's diagnosis in work-done progress lasting this long before publishing")
	delay      = flag.Duration("delay", 0, "wait this long before publishing after a change")
	loadError  = flag.String("load-error", "", "while loading (after initialized), send this error-level window/showMessage")
	loadWhile  = flag.String("load-error-while", "", "send -load-error only while this file exists")
	queryError = flag.String("query-error", "", "answer textDocument/documentSymbol with an error with this message")
	loadHang   = flag.Bool("load-hang", false, "begin a work-done progress \"Loading\" after initialized and never end it")
	loadFor    = flag.Duration("load-for", 0, "begin a work-done progress \"Loading\" after initialized and end it after this long")
	holdSymbol = flag.Bool("hold-symbols", false, "hold each workspace/symbol request unanswered until it is cancelled, and handle nothing after it meanwhile (as gopls serves one request at a time)")
	tsserver   = flag.String("tsserver", "", `offer typescript.tsserverRequest: "answer" answers tsserver's diagnostic requests, "other" answers something else`)
	latePub    = flag.String("late-publish", "", `50 ms after answering a pull (textDocument/diagnostic, or tsserver's suggestion request), publish an empty set for the document: "unversioned" without a version, "older" tagged with the version before the current one (typescript-language-server's own pass, begun before the change)`)
)

type message struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id,omitempty"`
	Method  string           `json:"method,omitempty"`
	Params  json.RawMessage  `json:"params,omitempty"`
	Result  json.RawMessage  `json:"result,omitempty"`
	Error   json.RawMessage  `json:"error,omitempty"`
}

type server struct {
	out     sync.Mutex
	w       io.Writer
	log     *os.File
	enc     string
	docs    map[string]string
	version map[string]int    // of each open document
	pending map[string]string // request id → method, for answers to our requests
	nextID  int
}

func main() {
	flag.Parse()
	s := &server{w: os.Stdout, docs: map[string]string{}, version: map[string]int{}, pending: map[string]string{}, enc: "utf-16"}
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakels:", err)
			os.Exit(2)
		}
		s.log = f
	}
	if *child {
		cmd := exec.Command("sleep", "1000")
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fakels: start child:", err)
		} else {
			s.record("child %d", cmd.Process.Pid)
		}
	}
	fmt.Fprintln(os.Stderr, "fakels: starting")
	r := bufio.NewReader(os.Stdin)
	var held *message    // a workspace/symbol request being "worked on"
	var queue []*message // what came after it
	for {
		m, err := read(r)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakels: read:", err)
			os.Exit(0)
		}
		if held != nil {
			if m.Method == "$/cancelRequest" && cancels(m, held) {
				s.record("recv %s", m.Method)
				s.send(map[string]any{"jsonrpc": "2.0", "id": held.ID, "error": map[string]any{"code": -32800, "message": "cancelled"}})
				held = nil
				for _, q := range queue {
					s.handle(q)
				}
				queue = nil
			} else {
				queue = append(queue, m)
			}
			continue
		}
		if *holdSymbol && m.Method == "workspace/symbol" {
			s.record("recv %s", m.Method)
			held = m
			continue
		}
		s.handle(m)
		if m.Method != "" && m.Method == *stopOn {
			time.Sleep(time.Hour)
		}
	}
}

// cancels reports whether a $/cancelRequest names req.
func cancels(m, req *message) bool {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	return json.Unmarshal(m.Params, &p) == nil && req.ID != nil && string(p.ID) == string(*req.ID)
}

func read(r *bufio.Reader) (*message, error) {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, err = strconv.Atoi(v)
			if err != nil {
				return nil, err
			}
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("no Content-Length")
	}
	buf := make([]byte, length)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	var m message
	return &m, json.Unmarshal(buf, &m)
}

func (s *server) send(m any) {
	b, _ := json.Marshal(m)
	s.out.Lock()
	defer s.out.Unlock()
	fmt.Fprintf(s.w, "Content-Length: %d\r\n\r\n%s", len(b), b)
}

func (s *server) record(format string, args ...any) {
	if s.log != nil {
		fmt.Fprintf(s.log, format+"\n", args...)
	}
}

func (s *server) reply(id *json.RawMessage, result any) {
	s.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (s *server) notify(method string, params any) {
	s.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func (s *server) request(method string, params any) {
	s.out.Lock()
	s.nextID++
	id := "fake-" + strconv.Itoa(s.nextID)
	s.pending[id] = method
	s.out.Unlock()
	s.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

func (s *server) handle(m *message) {
	if m.Method == "" && m.ID != nil {
		var id string
		json.Unmarshal(*m.ID, &id)
		s.out.Lock()
		method := s.pending[id]
		s.out.Unlock()
		answer := m.Result
		if m.Error != nil {
			answer = m.Error
		}
		s.record("answer %s %s", method, answer)
		return
	}
	s.record("recv %s", m.Method)
	if m.Method == *crashOn {
		fmt.Fprintln(os.Stderr, "fakels: crashing on", m.Method)
		os.Exit(3)
	}
	if m.Method == *garbageOn && m.Method != "" {
		s.out.Lock()
		fmt.Fprint(s.w, "this is not a message\r\n\r\n{{{")
		s.out.Unlock()
		return
	}
	if *silent {
		return
	}
	switch m.Method {
	case "initialize":
		if *garbage {
			fmt.Fprint(s.w, "Content-Length: 12\r\n\r\n{not json!!}")
			return
		}
		var p struct {
			Capabilities struct {
				General struct {
					PositionEncodings []string `json:"positionEncodings"`
				} `json:"general"`
			} `json:"capabilities"`
		}
		json.Unmarshal(m.Params, &p)
		for _, e := range p.Capabilities.General.PositionEncodings {
			if e == *encoding {
				s.enc = e
			}
		}
		caps := map[string]any{
			"positionEncoding":       s.enc,
			"textDocumentSync":       map[string]any{"openClose": true, "change": 1},
			"documentSymbolProvider": true,
		}
		if *tsserver != "" {
			caps["executeCommandProvider"] = map[string]any{"commands": []string{"_typescript.organizeImports", "typescript.tsserverRequest"}}
		}
		if *holdSymbol {
			caps["workspaceSymbolProvider"] = true
		}
		if *pull && !*regPull {
			caps["diagnosticProvider"] = map[string]any{"interFileDependencies": false, "workspaceDiagnostics": false}
		}
		s.reply(m.ID, map[string]any{"capabilities": caps, "serverInfo": map[string]any{"name": "fakels", "version": "1"}})
	case "initialized":
		// Exercise every server→client request darman answers.
		s.request("workspace/configuration", map[string]any{"items": []any{map[string]any{"section": "fake.answer"}, map[string]any{"section": "missing"}}})
		s.request("workspace/workspaceFolders", nil)
		s.request("window/workDoneProgress/create", map[string]any{"token": 7})
		s.request("window/showMessageRequest", map[string]any{"type": 3, "message": "Pick one", "actions": []any{map[string]any{"title": "A"}}})
		regs := []any{map[string]any{"id": "watch", "method": "workspace/didChangeWatchedFiles", "registerOptions": map[string]any{"watchers": []any{map[string]any{"globPattern": "**/*"}}}}}
		if *regPull {
			regs = append(regs, map[string]any{"id": "pull", "method": "textDocument/diagnostic", "registerOptions": map[string]any{"interFileDependencies": false, "workspaceDiagnostics": false}})
		}
		s.request("client/registerCapability", map[string]any{"registrations": regs})
		s.request("workspace/unknownThing", nil)
		s.notify("window/logMessage", map[string]any{"type": 3, "message": "fakels ready"})
		s.load()
	case "textDocument/didOpen":
		var p struct {
			TextDocument struct {
				URI     string `json:"uri"`
				Version int    `json:"version"`
				Text    string `json:"text"`
			} `json:"textDocument"`
		}
		json.Unmarshal(m.Params, &p)
		s.docs[p.TextDocument.URI] = p.TextDocument.Text
		s.version[p.TextDocument.URI] = p.TextDocument.Version
		s.changed(p.TextDocument.URI, p.TextDocument.Version)
	case "textDocument/didChange":
		var p struct {
			TextDocument struct {
				URI     string `json:"uri"`
				Version int    `json:"version"`
			} `json:"textDocument"`
			ContentChanges []struct {
				Text string `json:"text"`
			} `json:"contentChanges"`
		}
		json.Unmarshal(m.Params, &p)
		if n := len(p.ContentChanges); n > 0 {
			s.docs[p.TextDocument.URI] = p.ContentChanges[n-1].Text
		}
		s.version[p.TextDocument.URI] = p.TextDocument.Version
		s.changed(p.TextDocument.URI, p.TextDocument.Version)
	case "textDocument/didClose":
		var p struct {
			TextDocument struct {
				URI string `json:"uri"`
			} `json:"textDocument"`
		}
		json.Unmarshal(m.Params, &p)
		delete(s.docs, p.TextDocument.URI)
		if !*pull {
			s.notify("textDocument/publishDiagnostics", map[string]any{"uri": p.TextDocument.URI, "diagnostics": []any{}})
		}
	case "textDocument/diagnostic":
		var p struct {
			TextDocument struct {
				URI string `json:"uri"`
			} `json:"textDocument"`
		}
		json.Unmarshal(m.Params, &p)
		text := s.docs[p.TextDocument.URI]
		s.reply(m.ID, map[string]any{"kind": "full", "resultId": strconv.Itoa(len(text)), "items": s.diagnose(p.TextDocument.URI, text, true)})
		s.publishLate(p.TextDocument.URI)
	case "workspace/didChangeWatchedFiles":
		// Files changed: load the workspace again.
		s.load()
	case "workspace/executeCommand":
		s.executeCommand(m)
	case "textDocument/documentSymbol":
		if *queryError != "" {
			s.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32603, "message": *queryError}})
			return
		}
		var p struct {
			TextDocument struct {
				URI string `json:"uri"`
			} `json:"textDocument"`
		}
		json.Unmarshal(m.Params, &p)
		// Each line "func NAME" of the open document declares a function.
		syms := []any{}
		for i, line := range strings.Split(s.docs[p.TextDocument.URI], "\n") {
			if name, ok := strings.CutPrefix(line, "func "); ok {
				r := map[string]any{"start": map[string]int{"line": i, "character": 5}, "end": map[string]int{"line": i, "character": 5 + len(name)}}
				syms = append(syms, map[string]any{"name": name, "kind": 12, "range": r, "selectionRange": r})
			}
		}
		s.reply(m.ID, syms)
	case "shutdown":
		s.reply(m.ID, nil)
	case "exit":
		os.Exit(0)
	default:
		if m.ID != nil {
			s.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "fakels: no " + m.Method}})
		}
	}
}

// load plays loading the workspace (after initialized, and again when
// watched files change), wrapped in work-done progress, and fails it as
// the flags say.
func (s *server) load() {
	if *loadError == "" && !*loadHang && *loadFor == 0 {
		return
	}
	s.notify("$/progress", map[string]any{"token": "load", "value": map[string]any{"kind": "begin", "title": "Loading", "message": "reading the workspace"}})
	if *loadHang {
		return
	}
	time.Sleep(*loadFor)
	failing := *loadError != ""
	if *loadWhile != "" {
		if _, err := os.Stat(*loadWhile); err != nil {
			failing = false
		}
	}
	if failing {
		s.notify("window/showMessage", map[string]any{"type": 1, "message": *loadError})
	}
	s.notify("$/progress", map[string]any{"token": "load", "value": map[string]any{"kind": "end"}})
}

// changed publishes the diagnostics of a changed document, in rounds.
func (s *server) changed(uri string, version int) {
	if *pull {
		return
	}
	text := s.docs[uri]
	if *progress > 0 {
		s.notify("$/progress", map[string]any{"token": "diag", "value": map[string]any{"kind": "begin", "title": "diagnosing"}})
		time.Sleep(*progress)
		s.notify("$/progress", map[string]any{"token": "diag", "value": map[string]any{"kind": "end"}})
	}
	if *delay > 0 {
		time.Sleep(*delay)
	}
	for i := 1; i <= *rounds; i++ {
		if i > 1 {
			time.Sleep(*roundDelay)
		}
		params := map[string]any{"uri": uri, "diagnostics": s.diagnose(uri, text, i == *rounds)}
		if *versioned {
			params["version"] = version
		}
		s.notify("textDocument/publishDiagnostics", params)
	}
	for i := 0; i < *flood; i++ {
		s.notify("textDocument/publishDiagnostics", map[string]any{
			"uri":         fmt.Sprintf("file:///flood/%d.txt", i),
			"diagnostics": []any{map[string]any{"range": rng(0, 0, 0, 1), "message": "flood", "code": i}},
		})
	}
}

func (s *server) diagnose(uri, text string, final bool) []any {
	items := []any{}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	first := lines[0]
	for n, line := range lines {
		for _, word := range []string{"SYNTAX", "ERROR", "WARN"} {
			i := strings.Index(line, word)
			if i < 0 || (word != "SYNTAX" && !final) {
				continue
			}
			sev, code := 1, any("E"+word)
			if word == "WARN" {
				sev, code = 2, 42
			}
			col := s.units(line[:i])
			item := map[string]any{
				"range":    rng(n, col, n, col+s.units(word)),
				"severity": sev,
				"code":     code,
				"source":   "fakels",
				"message":  "found " + word,
			}
			if word == "ERROR" {
				// Where the document starts, as a related place, and a
				// documentation link for the code.
				item["codeDescription"] = map[string]any{"href": "https://example.com/fakels/EERROR"}
				item["relatedInformation"] = []any{map[string]any{
					"location": map[string]any{"uri": uri, "range": rng(0, 0, 0, s.units(first))},
					"message":  "the document starts here",
				}}
			}
			items = append(items, item)
		}
	}
	for i := 0; i < *floodItems; i++ {
		items = append(items, map[string]any{"range": rng(0, 0, 0, 0), "severity": 3, "message": "noise " + strconv.Itoa(i)})
	}
	return items
}

func (s *server) units(str string) int {
	switch s.enc {
	case "utf-8":
		return len(str)
	case "utf-32":
		return utf8.RuneCountInString(str)
	}
	n := 0
	for _, r := range str {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func rng(l1, c1, l2, c2 int) map[string]any {
	return map[string]any{
		"start": map[string]any{"line": l1, "character": c1},
		"end":   map[string]any{"line": l2, "character": c2},
	}
}

// executeCommand answers typescript.tsserverRequest for tsserver's
// diagnostic requests.
func (s *server) executeCommand(m *message) {
	var p struct {
		Command   string            `json:"command"`
		Arguments []json.RawMessage `json:"arguments"`
	}
	json.Unmarshal(m.Params, &p)
	var kind string
	var args struct {
		File string `json:"file"`
	}
	if len(p.Arguments) == 2 {
		json.Unmarshal(p.Arguments[0], &kind)
		json.Unmarshal(p.Arguments[1], &args)
	}
	if *tsserver == "" || p.Command != "typescript.tsserverRequest" || kind == "" {
		s.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32602, "message": "fakels: no such command"}})
		return
	}
	if *tsserver == "other" {
		s.reply(m.ID, map[string]any{"ok": true})
		return
	}
	text, open := s.docs[args.File]
	if !open {
		s.reply(m.ID, map[string]any{"seq": 0, "type": "response", "command": kind, "success": false, "message": "No Project."})
		return
	}
	path := strings.TrimPrefix(args.File, "file://")
	lines := strings.Split(text, "\n")
	words := map[string][]string{
		"syntacticDiagnosticsSync":  {"SYNTAX"},
		"semanticDiagnosticsSync":   {"ERROR", "WARN"},
		"suggestionDiagnosticsSync": {"unused"},
	}[kind]
	body := []any{}
	for n, line := range lines {
		for _, word := range words {
			i := strings.Index(line, word)
			if i < 0 {
				continue
			}
			col := utf16Len(line[:i]) + 1
			d := map[string]any{
				"start":    map[string]any{"line": n + 1, "offset": col},
				"end":      map[string]any{"line": n + 1, "offset": col + len(word)},
				"text":     "found " + word,
				"code":     2322,
				"category": "error",
			}
			switch word {
			case "ERROR":
				d["relatedInformation"] = []any{map[string]any{
					"span":     map[string]any{"start": map[string]any{"line": 1, "offset": 1}, "end": map[string]any{"line": 1, "offset": utf16Len(lines[0]) + 1}, "file": path},
					"message":  "the document starts here",
					"category": "message",
					"code":     2728,
				}}
			case "WARN":
				d["category"], d["code"] = "warning", 7027
			case "unused":
				d["category"], d["code"], d["reportsUnnecessary"] = "suggestion", 6133, true
			case "SYNTAX":
				d["code"] = 1005
			}
			body = append(body, d)
		}
	}
	s.reply(m.ID, map[string]any{"seq": 0, "type": "response", "command": kind, "request_seq": 1, "success": true, "body": body})
	if kind == "suggestionDiagnosticsSync" {
		s.publishLate(args.File)
	}
}

// publishLate publishes, as -late-publish asks, an empty set for uri a
// little after a pull of it was answered, and logs "late publish" once it
// is written.
func (s *server) publishLate(uri string) {
	params := map[string]any{"uri": uri, "diagnostics": []any{}}
	switch *latePub {
	case "":
		return
	case "older":
		params["version"] = s.version[uri] - 1
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.notify("textDocument/publishDiagnostics", params)
		s.record("late publish")
	}()
}

func utf16Len(str string) int {
	n := 0
	for _, r := range str {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
