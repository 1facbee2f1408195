package lsp

import (
	"context"
	"encoding/json"
	"time"
)

// ModelChoices are the models a client may offer the user, known from the
// configuration before the agent starts, and reported in initialize's
// experimental.darman.
type ModelChoices struct {
	// Models are the configured providers' models, "provider/model-id".
	Models []ModelChoice
	// Default is the model a session gets when the client names none; ""
	// when only the agent can tell (with no model configured, it looks for
	// a local Ollama server first, which initialize does not wait for).
	Default string
}

// ModelChoice is one model in experimental.darman.models.
type ModelChoice struct {
	ID            string `json:"id"`
	Name          string `json:"name,omitempty"`
	ContextWindow int    `json:"contextWindow,omitempty"`
}

// modelChoices asks Options.Models for the models of the workspace and
// settings initialize names. A failure (a config file that does not load)
// leaves the lists empty: the agent, started with the same configuration,
// reports it to the user.
func (s *Server) modelChoices(ctx context.Context, setup Setup) ModelChoices {
	if s.opts.Models == nil {
		return ModelChoices{}
	}
	began := time.Now()
	mc, err := s.opts.Models(ctx, setup)
	if err != nil {
		s.log.Warn("lsp: the models to offer are unknown", "err", err)
		return ModelChoices{}
	}
	s.log.Debug("lsp: models to offer", "models", len(mc.Models), "default", mc.Default, "took", time.Since(began))
	return mc
}

// servedModels is darman.model.list's answer.
type servedModels struct {
	Models  []ModelChoice `json:"models"`
	Default string        `json:"default,omitempty"`
}

// cmdModelList answers darman.model.list: the models each usable
// provider's server says it serves (Options.ServedModels asks them), for
// a picker that offers what the endpoint holds rather than darman's
// catalog. A provider whose server does not answer keeps its configured
// and catalog models. Without Options.ServedModels, initialize's list.
func (s *Server) cmdModelList(ctx context.Context, arg json.RawMessage) (any, error) {
	if err := args("darman.model.list", arg, &struct{}{}); err != nil {
		return nil, err
	}
	s.reconfigure.Lock()
	setup := s.setup(s.agentSettings)
	s.reconfigure.Unlock()
	list := s.opts.ServedModels
	if list == nil {
		list = s.opts.Models
	}
	if list == nil {
		return servedModels{Models: []ModelChoice{}}, nil
	}
	mc, err := list(ctx, setup)
	if err != nil {
		return nil, err
	}
	return servedModels{Models: nonNil(mc.Models), Default: mc.Default}, nil
}
