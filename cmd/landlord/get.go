package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func init() { commands = append(commands, newGetCommand) }

func newGetCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show a tenant",
		Long: `Show a tenant by name or id: its status, desired state and endpoints.

A tenant with placements shows its providers joined with + (docker+nomad),
its summarized status (ready when every placement is), then each placement:
its provider, status, message, workload name, endpoints, last drift and
compute_config.`,
		Example: `  landlord get acme
  landlord get 0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f10 -o yaml
  landlord get acme -o json | jq .compute_config`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	cmd.ValidArgsFunction = completeTenantNames(cf)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		t, err := c.Tenants().Get(contextOf(cmd), args[0], client.GetOptions{})
		if err != nil {
			return exitFor(fmt.Errorf("tenant %s: %w", args[0], err))
		}
		return printTenant(cmd, cf.output, *t)
	}
	return cmd
}
