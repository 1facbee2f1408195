package main

import (
	"os"

	"github.com/darman-dev/darman/internal/childenv"
	"github.com/darman-dev/darman/internal/config"
)

// envPolicy is configuration's shell.env as a childenv policy, with
// darman's provider keys and header values as secrets by value.
func envPolicy(cfg config.Config) childenv.Policy {
	p := childenv.Policy{
		Inherit: childenv.Inherit(cfg.Shell.Env.Inherit),
		Keep:    cfg.Shell.Env.Keep,
		Exclude: cfg.Shell.Env.Exclude,
		Set:     cfg.Shell.Env.Set,
	}
	for _, prov := range cfg.Provider {
		if prov.APIKey != "" {
			p.Secrets = append(p.Secrets, prov.APIKey)
		}
		for _, v := range prov.Headers {
			p.Secrets = append(p.Secrets, v)
		}
	}
	return p
}

// childEnviron is the environment of every process darman starts for
// others: bash commands, MCP stdio servers, language servers. What it
// leaves out for being secret is first wiped from darman's own environment
// block too (see childenv.Scrub), where a command could read it.
func childEnviron(cfg config.Config) []string {
	p := envPolicy(cfg)
	childenv.Scrub(p)
	return childenv.Filter(os.Environ(), p)
}
