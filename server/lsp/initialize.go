package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/server/lsp/internal/buffer"
	"github.com/darman-dev/darman/server/lsp/internal/edit"
	"github.com/darman-dev/darman/server/rpc"
)

// ProtocolVersion is the version of darman's LSP extension protocol
// (docs/protocol.md), sent in experimental.darman.protocolVersion.
const ProtocolVersion = 1

// initialize reads the client's capabilities and workspace, starts the
// agent in the background and answers with darman's capabilities.
func (s *Server) initialize(ctx context.Context, raw json.RawMessage) (any, error) {
	var p initializeParams
	if err := rpc.Decode(raw, &p); err != nil {
		return nil, err
	}
	s.client = client{caps: p.Capabilities}
	if p.ClientInfo != nil {
		s.client.name, s.client.version = p.ClientInfo.Name, p.ClientInfo.Version
	}
	if len(p.Capabilities.Experimental) > 0 {
		var exp struct {
			Darman json.RawMessage `json:"darman"`
		}
		if err := json.Unmarshal(p.Capabilities.Experimental, &exp); err == nil && len(exp.Darman) > 0 {
			if err := json.Unmarshal(exp.Darman, &s.client.opt); err != nil {
				s.log.Warn("lsp: capabilities.experimental.darman is not an object of booleans; no opt-ins", "err", err)
			}
		}
	}

	var folders []string
	for _, f := range p.WorkspaceFolders {
		path, err := buffer.URIToPath(f.URI)
		if err != nil {
			s.log.Warn("lsp: workspace folder skipped", "uri", f.URI, "err", err)
			continue
		}
		folders = append(folders, path)
	}
	root := s.opts.Root
	switch {
	case len(folders) > 0:
		root = folders[0]
	case p.RootURI != nil && *p.RootURI != "":
		path, err := buffer.URIToPath(*p.RootURI)
		if err != nil {
			return nil, rpc.InvalidParams("rootUri: %v", err)
		}
		root = path
	case p.RootPath != nil && *p.RootPath != "":
		root = *p.RootPath
	}
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("no workspace folder was given and the current directory is unknown: %w", err)
		}
		root = wd
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, rpc.InvalidParams("workspace root %q: %v", root, err)
	}
	if !slices.Contains(folders, root) {
		folders = append([]string{root}, folders...)
	}
	s.root = root
	s.folders = folders
	we := s.client.caps.Workspace.WorkspaceEdit
	s.ws = edit.New(root, s.docs, editClient{s}, edit.Caps{AndSave: s.client.opt.ApplyEditAndSave, ApplyEdit: s.client.caps.Workspace.ApplyEdit,
		DocumentChanges: we.DocumentChanges, Create: slices.Contains(we.ResourceOperations, "create")})
	s.log.Info("lsp: initialize", "client", s.client.name, "clientVersion", s.client.version, "root", root,
		"sessionUpdates", s.client.opt.SessionUpdates, "requestPermission", s.client.opt.RequestPermission,
		"applyEditAndSave", s.client.opt.ApplyEditAndSave, "elicitation", s.client.opt.Elicitation)

	var settings json.RawMessage
	if len(p.InitializationOptions) > 0 {
		var opts struct {
			Darman           json.RawMessage `json:"darman"`
			WorkspaceTrusted *bool           `json:"workspaceTrusted"`
		}
		if err := json.Unmarshal(p.InitializationOptions, &opts); err != nil {
			s.log.Warn("lsp: initializationOptions is not an object; ignored", "err", err)
		}
		settings = opts.Darman
		s.editorTrust = opts.WorkspaceTrusted
	}
	ss, agentSettings, err := splitSettings(settings)
	if err != nil {
		s.settingsErr = fmt.Errorf("initializationOptions.darman: %w; using the config files alone", err)
	}
	s.settings, s.agentSettings = ss, agentSettings
	setup := s.setup(agentSettings)
	choices := s.modelChoices(ctx, setup)
	s.loadAgents(ctx, setup)
	s.setupCompletion(ctx, setup)
	// Building the agent (the store, its tools) takes the processor from
	// the answer: start it once the answer is written.
	return rpc.Then{Result: completionCapabilities(s.initializeResult(choices), s.complete.On(), s.complete.Items()), After: func() { s.startAgent(agentSettings) }}, nil
}

func (s *Server) initializeResult(choices ModelChoices) initResult {
	version := s.opts.Version
	if version == "" {
		version = "dev"
	}
	var res initResult
	caps := &res.Capabilities
	caps.TextDocumentSync.OpenClose = true
	caps.TextDocumentSync.Change = int(protocol.TextDocumentSyncKindIncremental)
	caps.CodeActionProvider = codeActionOptions{
		CodeActionKinds: []string{protocol.CodeActionKindQuickFix, protocol.CodeActionKindRefactorRewrite, protocol.CodeActionKindSource},
		ResolveProvider: true,
	}
	caps.ExecuteCommandProvider.Commands = commandNames()
	caps.Workspace.WorkspaceFolders.Supported = true
	caps.Workspace.WorkspaceFolders.ChangeNotifications = true
	d := &caps.Experimental.Darman
	d.ProtocolVersion = ProtocolVersion
	d.Models = nonNil(choices.Models)
	d.Model = choices.Default
	d.Agents = agentInfos(s.catalog())
	res.ServerInfo = serverInfo{Name: "darman", Version: version}
	return res
}

// initialized tells the user, once the client is ready to show it, why the
// agent did not start if it did not.
func (s *Server) initialized(context.Context, json.RawMessage) error {
	s.watchAgents()
	if s.settingsErr != nil {
		s.showMessage(protocol.MessageTypeError, "darman: "+s.settingsErr.Error())
	}
	if err := s.complete.Err(); err != nil {
		s.showMessage(protocol.MessageTypeWarning, "darman: inline completions are off: "+err.Error())
	}
	s.goOwned(func() {
		a, err := s.agent.get(s.ctx)
		if err != nil && s.ctx.Err() == nil {
			s.showMessage(protocol.MessageTypeError, err.Error())
		}
		if err == nil {
			s.tellTrust(a)
		}
	})
	return nil
}

// setup is what Options' functions learn of the workspace, without the
// editor's workspace and asker (see startAgentNow).
func (s *Server) setup(settings json.RawMessage) Setup {
	s.mu.Lock()
	defer s.mu.Unlock()
	var trusted *bool
	if s.editorTrust != nil {
		trusted = ptr(*s.editorTrust)
	}
	return Setup{Root: s.root, Folders: slices.Clone(s.folders), Settings: settings, EditorTrusted: trusted}
}

// startAgent starts the agent in the background with the client's
// settings.
func (s *Server) startAgent(settings json.RawMessage) {
	s.goOwned(func() {
		a, err := s.startAgentNow(settings)
		s.agent.mu.Lock()
		s.agent.agent, s.agent.err = a, err
		s.agent.mu.Unlock()
		close(s.agent.ready)
		if err != nil {
			s.log.Error("lsp: the agent did not start", "err", err)
		}
	})
}

func (s *Server) didChangeWorkspaceFolders(_ context.Context, raw json.RawMessage) error {
	var p protocol.DidChangeWorkspaceFoldersParams
	if err := rpc.Decode(raw, &p); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range p.Event.Removed {
		if path, err := buffer.URIToPath(f.URI); err == nil && path != s.root {
			s.folders = slices.DeleteFunc(s.folders, func(x string) bool { return x == path })
		}
	}
	for _, f := range p.Event.Added {
		if path, err := buffer.URIToPath(f.URI); err == nil && !slices.Contains(s.folders, path) {
			s.folders = append(s.folders, path)
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// nonNil makes a nil slice an empty one, so that it is sent as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// startAgentNow builds an agent with the settings.
func (s *Server) startAgentNow(settings json.RawMessage) (*Agent, error) {
	setup := s.setup(settings)
	setup.Workspace, setup.Asker, setup.Elicitor, setup.Notices, setup.Agents = s.ws, &asker{s: s}, editorGate{s: s}, s.notices, s.catalog()
	a, err := s.opts.Start(s.ctx, setup)
	if err == nil && (a == nil || a.Sessions == nil || a.Store == nil || a.Runtime == nil) {
		err = fmt.Errorf("Options.Start returned an incomplete agent (Sessions, Store and Runtime are required)")
	}
	if err == nil {
		s.complete.SetDefiner(a.Runtime.Definitions())
	}
	return a, err
}

// editClient is the connection as the workspace's edits use it: one
// workspace/applyEdit, within Options.PermissionTimeout.
type editClient struct{ s *Server }

func (c editClient) ApplyEdit(ctx context.Context, params protocol.ApplyWorkspaceEditParams) (protocol.ApplyWorkspaceEditResponse, error) {
	var res protocol.ApplyWorkspaceEditResponse
	err := c.s.call(ctx, c.s.opts.PermissionTimeout, protocol.ServerWorkspaceApplyEdit, params, &res)
	return res, err
}
