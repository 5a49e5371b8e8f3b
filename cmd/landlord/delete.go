package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func init() { commands = append(commands, newDeleteCommand) }

func newDeleteCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a tenant",
		Long: `Ask for a tenant's deletion; the controller then destroys its workload.
Asking again is harmless, and retries a deletion that failed.`,
		Example: `  landlord delete acme --wait`,
		Args:    cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	wf := addWaitFlags(cmd, "deleted")
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
		t, err := c.Tenants().Delete(contextOf(cmd), name, client.DeleteOptions{})
		if err != nil {
			return exitFor(fmt.Errorf("delete tenant %s: %w", name, err))
		}
		if wf.wait {
			last, err := waitFor(cmd, c, *t, wf.timeout, client.UntilDeleted)
			switch {
			case client.IsNotFound(err):
				// Gone from the store too: deleted.
				t.Status = client.StatusDeleted
			case err != nil:
				return exitFor(err)
			default:
				t = last
			}
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, t)
		}
		if t.Status == client.StatusDeleted {
			fmt.Fprintf(cmd.OutOrStdout(), "tenant %s deleted\n", t.Name)
		} else {
			fmt.Fprintf(cmd.OutOrStdout(), "tenant %s is %s; follow it with: landlord get %s\n", t.Name, t.Status, t.Name)
		}
		return nil
	}
	return cmd
}
