package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

// placementFlags is --placement NAME=CONFIG, repeatable, on create and
// set: the placements of a tenant, each a name and a compute_config.
type placementFlags struct {
	values []string
}

// addPlacementFlags adds --placement to cmd; with replaces, the help says
// that the placements given replace the tenant's.
func addPlacementFlags(cmd *cobra.Command, replaces bool) *placementFlags {
	f := &placementFlags{}
	help := "a placement NAME=CONFIG (repeatable), CONFIG as --config takes it; not with --config"
	if replaces {
		help += "; replaces all placements: one left out is removed and its workload destroyed"
	}
	cmd.Flags().StringArrayVar(&f.values, "placement", nil, help)
	return f
}

// given reports whether --placement was.
func (f *placementFlags) given(cmd *cobra.Command) bool { return cmd.Flags().Changed("placement") }

// check refuses --placement with --config: a tenant is declared with one
// or the other.
func (f *placementFlags) check(cmd *cobra.Command) error {
	if f.given(cmd) && cmd.Flags().Changed("config") {
		return withExitCode(exitUsage, errors.New("--placement and --config cannot be given together: declare the tenant's one compute_config with --config, "+
			"or each of its placements with --placement NAME=CONFIG"))
	}
	return nil
}

// read returns the placements, in the order given, nil without
// --placement. provider, unless empty, is the compute_provider of each
// placement whose config names none; those that name one keep it.
func (f *placementFlags) read(cmd *cobra.Command, provider string) ([]client.PlacementRequest, error) {
	if !f.given(cmd) {
		return nil, nil
	}
	// Every value is split, and standard input claimed once, before any
	// is read: a usage error reads nothing.
	names, values := make([]string, len(f.values)), make([]string, len(f.values))
	stdin := ""
	for i, v := range f.values {
		var err error
		if names[i], values[i], err = splitPlacement(v); err != nil {
			return nil, err
		}
		if values[i] == "-" {
			if stdin != "" {
				return nil, withExitCode(exitUsage, fmt.Errorf("--placement %s=- and %s=- both read standard input: give one of them as @path or inline", stdin, names[i]))
			}
			stdin = names[i]
		}
	}
	out := make([]client.PlacementRequest, len(f.values))
	for i, name := range names {
		config, err := readConfigOf("--placement", name, values[i], cmd.InOrStdin())
		if err != nil {
			return nil, withExitCode(exitFailure, err)
		}
		if config, err = withDefaultProvider(config, provider); err != nil {
			return nil, err
		}
		out[i] = client.PlacementRequest{Name: name, ComputeConfig: config}
	}
	return out, nil
}

// splitPlacement reads a --placement value, NAME=CONFIG. The name is
// checked only for what tells a value with no name (a config with an = in
// it); the server judges names.
func splitPlacement(v string) (name, config string, err error) {
	name, config, ok := strings.Cut(v, "=")
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n{}[]\"':,@") {
		return "", "", withExitCode(exitUsage, fmt.Errorf(`--placement %q: give NAME=CONFIG, such as web=@web.yaml or worker='{"image": "nginx:latest"}'`, v))
	}
	return name, config, nil
}

// placementNameOf is the name of the i-th --placement value of cmd, "" when
// there is none.
func placementNameOf(cmd *cobra.Command, i int) string {
	values, _ := cmd.Flags().GetStringArray("placement")
	if i < 0 || i >= len(values) {
		return ""
	}
	name, _, _ := strings.Cut(values[i], "=")
	return name
}

// withDefaultProvider sets compute_provider in config to provider, unless
// provider is empty or the config names a provider already.
func withDefaultProvider(config json.RawMessage, provider string) (json.RawMessage, error) {
	if provider == "" {
		return config, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(config, &top); err != nil {
		return nil, err
	}
	if _, ok := top[client.SelectionKey]; ok {
		return config, nil
	}
	return withProvider(config, provider)
}

// completePlacementNames completes a --placement flag's value with the
// placements of the tenant the command's first argument names, each
// described by its provider and status.
func completePlacementNames(cf *clientFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := cf.client(cmd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(contextOf(cmd), 3*time.Second)
		defer cancel()
		t, err := c.Tenants().Get(ctx, args[0], client.GetOptions{IncludeDeleted: true})
		if err != nil {
			cobra.CompDebugln("landlord: get tenant: "+err.Error(), false)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, p := range t.Placements {
			if strings.HasPrefix(p.Name, toComplete) {
				out = append(out, cobra.CompletionWithDesc(p.Name, p.ComputeProvider+", "+p.Status))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// providersOf is the providers of t joined with +: "docker+nomad" for a
// tenant with placements (client.Providers), its provider for a plain
// tenant.
func providersOf(t client.Tenant) string { return strings.Join(client.Providers(t), "+") }

// providerCell is the list table's PROVIDER of t: its providers
// (providersOf), marked when the server has not enabled them (enabled
// says, when not nil): "(not enabled)" when it has enabled none of them,
// else naming those it has not, "docker+nomad (nomad not enabled)".
func providerCell(t client.Tenant, enabled func(string) bool) string {
	shown := providersOf(t)
	off := notEnabledOf(t, enabled)
	switch {
	case len(off) == 0:
		return shown
	case len(t.Placements) == 0 || !slices.ContainsFunc(client.Providers(t), func(p string) bool { return !slices.Contains(off, p) }):
		return shown + notEnabledMark
	}
	return shown + " (" + strings.Join(off, ", ") + " not enabled)"
}

// notEnabledOf is the providers of t (those of every placement, removed
// or not: one is needed to destroy its workload) that enabled says the
// server has not enabled, distinct.
func notEnabledOf(t client.Tenant, enabled func(string) bool) []string {
	if enabled == nil || t.Status == client.StatusDeleted {
		return nil
	}
	all := []string{t.ComputeProvider}
	for _, p := range t.Placements {
		all = append(all, p.ComputeProvider)
	}
	var out []string
	for _, name := range all {
		if !enabled(name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
