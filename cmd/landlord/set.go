package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func init() { commands = append(commands, newSetCommand) }

func newSetCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "set NAME [--config VALUE | --placement NAME=CONFIG...] [--plan NAME[@VERSION]] [--pin|--unpin] [--maintenance-window WINDOW]",
		Short: "Replace a tenant's desired state",
		Long: `Replace a tenant's compute_config; the controller then updates its workload.

A tenant with placements is given all of its placements with --placement
NAME=CONFIG (repeatable; CONFIG as --config takes it), not --config: they
replace the tenant's. A placement left out is removed, and its workload
destroyed; one given that the tenant has keeps its provider; one it does not
have is added. landlord get NAME -o yaml shows the placements as they are.

Labels and annotations given replace the tenant's; without --label (or
--annotation) the tenant keeps the ones it has. A secret shown as
"[redacted]" and sent back so keeps its value. The change is refused if the
tenant changes between reading it and writing it.

--plan, --pin, --unpin and --maintenance-window change the tenant's plan
and window; what they do not name stays. --plan NAME moves the tenant to
another plan at that plan's current version (or keeps its version on its own
plan); NAME@VERSION names the version; --plan '' leaves the plan (its
compute_config then must be whole: give it with --config). --pin keeps the
tenant at its version, out of rollouts; --unpin lets rollouts move it again.
--maintenance-window takes '[DAYS] HH:MM-HH:MM [TIME_ZONE]' (see landlord
create --help); '' removes the window. With these flags, or without
--config, the tenant keeps the compute_config it has unless --config is
given.`,
		Example: `  landlord set acme --config '{"image": "nginx:1.27"}' --wait
  landlord get acme -o json | jq .compute_config | landlord set acme --config -
  landlord set acme --plan standard@3 --pin
  landlord set acme --unpin --maintenance-window 'mon-fri 22:00-02:00 America/New_York'
  landlord set acme --plan '' --config @acme.yaml
  landlord set acme --placement web=@web.yaml --placement worker='{"image": "worker:2", "compute_provider": "nomad"}'`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	wf := addWaitFlags(cmd, "ready with the change")
	cmd.ValidArgsFunction = completeTenantNames(cf)
	df := addDesiredFlags(cmd, true)
	pf := addPlanFlags(cmd, cf, true)
	plf := addPlacementFlags(cmd, true)

	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		if err := wf.check(cmd); err != nil {
			return err
		}
		if err := plf.check(cmd); err != nil {
			return err
		}
		fs := cmd.Flags()
		if !fs.Changed("config") && !plf.given(cmd) && !fs.Changed("label") && !fs.Changed("annotation") && !pf.changed(cmd) {
			return withExitCode(exitUsage, errors.New(`required flag(s) "config" not set: give the tenant's compute_config, its placements with --placement NAME=CONFIG, `+
				`or what to change with --label, --annotation, --plan, --pin, --unpin or --maintenance-window`))
		}
		name := args[0]
		var (
			req client.ReplaceTenantRequest
			err error
		)
		if req.ComputeConfig, req.Labels, req.Annotations, err = df.read(cmd, ""); err != nil {
			return err
		}
		if req.Placements, err = plf.read(cmd, ""); err != nil {
			return err
		}
		var patch map[string]any
		if pf.changed(cmd) || (req.ComputeConfig == nil && req.Placements == nil) {
			if patch, err = pf.patch(cmd); err != nil {
				return err
			}
		}
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		ctx := contextOf(cmd)
		cur, err := c.Tenants().Get(ctx, name, client.GetOptions{})
		if err != nil {
			return exitFor(fmt.Errorf("tenant %s: %w", name, err))
		}
		var t *client.Tenant
		if patch != nil {
			// A plan left or a window removed can only be patched; the
			// patch says what the rest of the change does, relative to
			// the tenant as read, and is refused if it changed since.
			t, err = patchTenant(cmd, c, cur, req, patch)
		} else {
			if !fs.Changed("label") {
				req.Labels = cur.Labels
			}
			if !fs.Changed("annotation") {
				req.Annotations = cur.Annotations
			}
			t, err = c.Tenants().Replace(ctx, cur.ID, req, client.UpdateOptions{IfMatch: cur.Version})
		}
		if err != nil {
			return exitFor(fmt.Errorf("set tenant %s: %w", name, err))
		}
		return wf.ready(cmd, c, t, cf.output)
	}
	return cmd
}

// patchTenant changes cur as req and the plan flags' members say, in one
// merge patch: req's compute_config, labels and annotations, when given,
// replace cur's (the patch removes what they leave out); its placements,
// when given, replace cur's whole, as a merge patch replaces an array.
func patchTenant(cmd *cobra.Command, c *client.Client, cur *client.Tenant, req client.ReplaceTenantRequest, members map[string]any) (*client.Tenant, error) {
	if req.ComputeConfig != nil {
		p, err := replacingPatch(cur.ComputeConfig, req.ComputeConfig)
		if err != nil {
			return nil, err
		}
		members["compute_config"] = p
	}
	if req.Placements != nil {
		members["placements"] = req.Placements
	}
	if cmd.Flags().Changed("label") {
		members["labels"] = replacingPairs(cur.Labels, req.Labels)
	}
	if cmd.Flags().Changed("annotation") {
		members["annotations"] = replacingPairs(cur.Annotations, req.Annotations)
	}
	body, err := json.Marshal(members)
	if err != nil {
		return nil, err
	}
	return c.Tenants().Patch(contextOf(cmd), cur.ID, body, client.UpdateOptions{IfMatch: cur.Version})
}
