package main

import (
	"fmt"
	"os"
	"strings"

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

// diagnoseChildEnv reports which of darman's variables the processes it
// starts for others do not get, by name (never by value).
func diagnoseChildEnv(r *report, cfg config.Config) {
	p := envPolicy(cfg)
	inherit := string(p.Inherit)
	if inherit == "" {
		inherit = string(childenv.InheritAll)
	}
	drops := childenv.Dropped(os.Environ(), p)
	detail := "inherit " + inherit + "; commands, MCP servers and language servers get every variable"
	if len(drops) > 0 {
		var names []string
		for _, d := range drops {
			if d.Why != "inherit" {
				names = append(names, d.Name+" ("+d.Why+")")
			}
		}
		detail = fmt.Sprintf("inherit %s; %d variable(s) left out", inherit, len(drops))
		if len(names) > 0 {
			detail += ": " + strings.Join(names, ", ")
		}
	}
	if len(p.Keep) > 0 {
		detail += "; kept by shell.env.keep: " + strings.Join(p.Keep, ", ")
	}
	r.add("environment", "child processes", "ok", detail)
	diagnoseEnvBlock(r, p)
}

// diagnoseEnvBlock reports which variables darman wiped from its own
// environment block, which other processes read (by name).
func diagnoseEnvBlock(r *report, p childenv.Policy) {
	childenv.Scrub(p)
	names, err := childenv.Scrubbed()
	switch {
	case err != nil:
		r.add("environment", "darman's environment block", "warn", "could not wipe the secrets' values ("+err.Error()+"): a command running as root can read them in /proc/PID/environ")
	case len(names) > 0:
		r.add("environment", "darman's environment block", "ok", "wiped the values of "+strings.Join(names, ", ")+" (darman keeps its own copy)")
	}
}
