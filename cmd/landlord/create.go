package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func init() { commands = append(commands, newCreateCommand) }

func newCreateCommand() *cobra.Command {
	var (
		provider string
		dryRun   bool
	)
	cmd := &cobra.Command{
		Use:   "create NAME (--config VALUE | --placement NAME=CONFIG...)",
		Short: "Create a tenant",
		Long: `Create a tenant; the controller then provisions its workload.

--config is the tenant's compute_config: inline JSON or YAML, @path or
file://path (a JSON or YAML file), or - to read standard input.

--placement NAME=CONFIG, repeatable, declares a tenant of placements
instead: each a name and a compute_config (CONFIG as --config takes it),
with its own provider, workload, status and endpoints, such as

  --placement web=@web.yaml --placement worker='{"image": "x", "compute_provider": "nomad"}'

A tenant is declared with --config or with --placement, not both; one that
follows a plan has one compute_config (--config). --provider sets the
compute_provider of each placement whose config names none.

--plan makes the tenant follow a plan (landlord plan list): its config is
then the plan version's, with --config's values over it (--config may be
left out). NAME@VERSION chooses a version other than the plan's current
one, and --pin keeps the tenant at it: rollouts of the plan leave a pinned
tenant alone. --maintenance-window limits when rollouts may change the
tenant: '[DAYS] HH:MM-HH:MM [TIME_ZONE]', where DAYS are mon … sun,
comma-separated, with ranges (mon-fri), or daily (the default); an end at or
before the start closes the next day; the time zone is an IANA name (the
default UTC).`,
		Example: `  landlord create acme --config '{"image": "nginx:latest"}' --wait
  landlord create acme --config 'image: nginx:latest' --label tier=gold
  landlord create acme --config @acme.yaml --provider docker --dry-run
  landlord create acme --plan standard --config 'env: {TIER: gold}'
  landlord create acme --placement web=@web.yaml --placement worker='{"image": "x", "compute_provider": "nomad"}' --provider docker
  landlord create acme --plan standard@3 --pin --maintenance-window 'sat,sun 02:00-04:00 Europe/Paris'`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cf := addClientFlags(cmd)
	wf := addWaitFlags(cmd, "ready")
	df := addDesiredFlags(cmd, false)
	pf := addPlanFlags(cmd, cf, false)
	plf := addPlacementFlags(cmd, false)
	fs := cmd.Flags()
	fs.StringVar(&provider, "provider", "", "the compute provider (sets compute_provider in the config; with --placement, in each placement's config that names none)")
	fs.BoolVar(&dryRun, "dry-run", false, "validate and show the tenant as it would be stored (with no id), with its effective config; store nothing")

	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		if err := wf.check(cmd); err != nil {
			return err
		}
		if dryRun && wf.wait {
			return withExitCode(exitUsage, errors.New("--dry-run stores nothing to --wait for"))
		}
		if err := plf.check(cmd); err != nil {
			return err
		}
		if !cmd.Flags().Changed("config") && !cmd.Flags().Changed("plan") && !plf.given(cmd) {
			return withExitCode(exitUsage, errors.New(`required flag(s) "config" not set: give the tenant's compute_config, or --plan to follow a plan; or its placements with --placement NAME=CONFIG`))
		}
		req := client.CreateTenantRequest{Name: args[0]}
		var err error
		configProvider := provider
		if plf.given(cmd) {
			configProvider = "" // it is each placement's
		}
		if req.ComputeConfig, req.Labels, req.Annotations, err = df.read(cmd, configProvider); err != nil {
			return err
		}
		if req.Placements, err = plf.read(cmd, provider); err != nil {
			return err
		}
		if req.ComputeConfig == nil && req.Placements == nil {
			req.ComputeConfig = json.RawMessage("{}") // the plan's config, with no overrides
		}
		if req.Plan, err = pf.choice(cmd); err != nil {
			return err
		}
		if req.MaintenanceWindow, err = pf.window(cmd); err != nil {
			return err
		}
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		t, err := c.Tenants().Create(contextOf(cmd), req, client.CreateOptions{DryRun: dryRun})
		if err != nil {
			return exitFor(fmt.Errorf("create tenant %s: %w", req.Name, err))
		}
		if dryRun {
			return printDryRun(cmd, cf.output, *t)
		}
		return wf.ready(cmd, c, t, cf.output)
	}
	return cmd
}

// withProvider sets compute_provider in config to provider, unless
// provider is empty; a config that names another provider is a usage error.
func withProvider(config json.RawMessage, provider string) (json.RawMessage, error) {
	if provider == "" {
		return config, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(config, &top); err != nil {
		return nil, err
	}
	name, _ := json.Marshal(provider)
	if cur, ok := top[client.SelectionKey]; ok {
		if bytes.Equal(cur, name) {
			return config, nil
		}
		return nil, withExitCode(exitUsage, fmt.Errorf("--provider %s: the config says %s: %s", provider, client.SelectionKey, cur))
	}
	// Insert the key first, keeping the rest as written.
	out := fmt.Appendf(nil, `{"%s":%s`, client.SelectionKey, name)
	if rest := bytes.TrimSpace(config[1:]); rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, config[1:]...), nil
}

// printDryRun writes the answer to a dry run in the output format. The
// table says that nothing was stored (renderDryRun); -o json and yaml are
// the API's answer without its id, which no tenant will have, and standard
// error says it.
func printDryRun(cmd *cobra.Command, format string, t client.Tenant) error {
	if format == "table" {
		return renderDryRun(cmd.OutOrStdout(), t, now())
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "dry run: nothing stored")
	return printObject(cmd.OutOrStdout(), format, struct {
		client.Tenant
		ID string `json:"id,omitempty"` // hides the embedded one
	}{Tenant: t})
}

// printTenant writes a tenant in the output format.
func printTenant(cmd *cobra.Command, format string, t client.Tenant) error {
	if format == "table" {
		return renderTenant(cmd.OutOrStdout(), t, now())
	}
	return printObject(cmd.OutOrStdout(), format, t)
}
