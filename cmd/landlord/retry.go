package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func init() { commands = append(commands, newRetryCommand) }

func newRetryCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "retry NAME",
		Short: "Try a failed tenant again",
		Long: `Try a failed tenant again with the desired state it has: the controller
provisions or updates it at once, its attempts counted from zero. It does
what the console's Retry does: it sets the annotation landlord.io/retry to
the time, a change of the tenant, whose generation goes up by one. Running
landlord set with the config the tenant has changes nothing, and so tries
nothing.

A tenant waiting for its next attempt after a failed one is tried at once.
Any other tenant is refused, as it has nothing to try again (a ready tenant
is not restarted). A deletion that failed is tried again by landlord delete.`,
		Example: `  landlord retry acme
  landlord retry acme --wait --timeout 5m`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	wf := addWaitFlags(cmd, "ready")
	cmd.ValidArgsFunction = completeTenantNames(cf)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		if err := wf.check(cmd); err != nil {
			return err
		}
		name := args[0]
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		ctx := contextOf(cmd)
		cur, err := c.Tenants().Get(ctx, name, client.GetOptions{})
		if err != nil {
			return exitFor(fmt.Errorf("tenant %s: %w", name, err))
		}
		if cur.Status != client.StatusFailed && cur.RetryAt == nil {
			return withExitCode(exitFailure, fmt.Errorf("tenant %s is %s, with no failed attempt to try again", name, cur.Status))
		}
		t, err := c.Tenants().Retry(ctx, cur.ID, client.UpdateOptions{IfMatch: cur.Version})
		if err != nil {
			return exitFor(fmt.Errorf("retry tenant %s: %w", name, err))
		}
		return wf.ready(cmd, c, t, cf.output)
	}
	return cmd
}
