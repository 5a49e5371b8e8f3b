package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func init() { commands = append(commands, newHistoryCommand) }

func newHistoryCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "Show a tenant's history",
		Long: `Show a tenant's events, oldest first: status changes, attempts, changes of
desired state and who made them. On a terminal, a MESSAGE past 100 columns
is cut, ending in …; written to a file or a pipe, it is whole.

For a tenant with placements, PLACEMENT names the placement an event is
about (empty for the tenant as a whole), and --placement NAME shows only
that placement's events.`,
		Example: `  landlord history acme
  landlord history acme --placement web
  landlord history acme -o json | jq '.events[] | select(.type == "attempt_failed")'`,
		Args: cobra.ExactArgs(1),
	}
	var opts client.EventOptions
	cf := addClientFlags(cmd)
	cmd.Flags().StringVar(&opts.Placement, "placement", "", "only the events of this placement, of a tenant with placements")
	_ = cmd.RegisterFlagCompletionFunc("placement", completePlacementNames(cf))
	cmd.ValidArgsFunction = completeTenantNames(cf)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		list := &client.EventList{Events: []client.Event{}}
		for e, err := range c.Tenants().AllEvents(contextOf(cmd), args[0], opts) {
			if err != nil {
				return exitFor(fmt.Errorf("tenant %s: %w", args[0], err))
			}
			list.Events = append(list.Events, e)
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, list)
		}
		return renderEvents(cmd.OutOrStdout(), list.Events, now())
	}
	return cmd
}
