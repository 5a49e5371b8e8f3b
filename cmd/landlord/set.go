package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func init() { commands = append(commands, newSetCommand) }

func newSetCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "set NAME --config VALUE",
		Short: "Replace a tenant's desired state",
		Long: `Replace a tenant's compute_config; the controller then updates its workload.

Labels and annotations given replace the tenant's; without --label (or
--annotation) the tenant keeps the ones it has. A secret shown as
"[redacted]" and sent back so keeps its value. The change is refused if the
tenant changes between reading it and writing it.`,
		Example: `  landlord set acme --config '{"image": "nginx:1.27"}' --wait
  landlord get acme -o json | jq .compute_config | landlord set acme --config -`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	wf := addWaitFlags(cmd, "ready with the change")
	cmd.ValidArgsFunction = completeTenantNames(cf)
	df := addDesiredFlags(cmd, true)

	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		if err := wf.check(cmd); err != nil {
			return err
		}
		name := args[0]
		var (
			req client.ReplaceTenantRequest
			err error
		)
		if req.ComputeConfig, req.Labels, req.Annotations, err = df.read(cmd, ""); err != nil {
			return err
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
		if !cmd.Flags().Changed("label") {
			req.Labels = cur.Labels
		}
		if !cmd.Flags().Changed("annotation") {
			req.Annotations = cur.Annotations
		}
		t, err := c.Tenants().Replace(ctx, cur.ID, req, client.UpdateOptions{IfMatch: cur.Version})
		if err != nil {
			return exitFor(fmt.Errorf("set tenant %s: %w", name, err))
		}
		return wf.ready(cmd, c, t, cf.output)
	}
	return cmd
}
