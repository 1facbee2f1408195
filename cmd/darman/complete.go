package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// completeWords offers fixed values to the shell's completion.
func completeWords(words ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(words, cobra.ShellCompDirectiveNoFileComp)
}

// completeAgents offers the agents a session runs, with what each is for.
func (a *app) completeAgents(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	loaded, err := a.config()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	root, err := a.workspaceRoot()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, ag := range loadAgents(root, loaded.Config, nil).List() {
		if ag.Runs() && strings.HasPrefix(ag.Name, prefix) {
			out = append(out, cobra.CompletionWithDesc(ag.Name, ag.Description))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeModels offers the models of the providers darman can reach, as
// darman models lists them (no server is asked).
func (a *app) completeModels(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	loaded, err := a.config()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	log, err := a.logger()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, p := range usableProviders(loaded.Config, nil, log) {
		for _, m := range p.Models {
			if ref := p.Name + "/" + m.ID; strings.HasPrefix(ref, prefix) {
				out = append(out, cobra.CompletionWithDesc(ref, m.Name))
			}
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
