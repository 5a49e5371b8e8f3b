package main

import (
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func init() { commands = append(commands, newDeleteCommand) }

func newDeleteCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a tenant",
		Long: `Ask for a tenant's deletion; the controller then destroys its workload.
Asking again is harmless, and retries a deletion that failed.

--forget is for a tenant whose compute provider the server no longer has
enabled (it was restarted with another): the controller cannot destroy its
workload, so its deletion waits for the provider (delete says so, and
--wait fails at once rather than wait for nothing). --forget
says what may still be running, then deletes the record at once, destroying
nothing; the tenant's history records who forgot it. It is refused for a
tenant whose provider is enabled. It needs an admin token.`,
		Example: `  landlord delete acme --wait
  landlord delete acme --forget`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	wf := addWaitFlags(cmd, "deleted")
	var forget bool
	cmd.Flags().BoolVar(&forget, "forget", false, "remove the record of a tenant whose provider the server has not enabled, destroying nothing (what it ran may still run)")
	cmd.MarkFlagsMutuallyExclusive("forget", "wait")
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
		if forget {
			return forgetTenant(cmd, c, name, cf.output)
		}
		t, err := c.Tenants().Delete(contextOf(cmd), name, client.DeleteOptions{})
		if err != nil {
			return exitFor(fmt.Errorf("delete tenant %s: %w", name, err))
		}
		if enabled := enabledProviders(contextOf(cmd), c); enabled != nil && !enabled(t.ComputeProvider) {
			// The controller leaves the deletion waiting for the provider:
			// a --wait would wait for nothing.
			err := fmt.Errorf("the deletion of tenant %s waits for its provider %s, which this server has not enabled: "+
				"enable it again, and landlord destroys the workload; or remove the record now, destroying nothing: landlord delete %s --forget",
				t.Name, t.ComputeProvider, t.Name)
			if wf.wait {
				return withExitCode(exitFailure, err)
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "note:", err)
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

// forgetTenant deletes the record of a tenant whose provider the server
// has not enabled, after saying what may still be running.
func forgetTenant(cmd *cobra.Command, c *client.Client, name, output string) error {
	ctx := contextOf(cmd)
	t, err := c.Tenants().Get(ctx, name, client.GetOptions{})
	if err != nil {
		return exitFor(fmt.Errorf("tenant %s: %w", name, err))
	}
	if enabled := enabledProviders(ctx, c); enabled != nil && enabled(t.ComputeProvider) {
		return withExitCode(exitFailure, fmt.Errorf("tenant %s: its provider %s is enabled on this server, so --forget would leave its workload running: "+
			"delete it without --forget, and landlord destroys the workload: landlord delete %s", t.Name, t.ComputeProvider, t.Name))
	}
	w := cmd.ErrOrStderr()
	fmt.Fprintf(w, "tenant %s ran on compute provider %s, which this server has not enabled: landlord cannot destroy what it ran, and forgetting it destroys nothing.\n",
		t.Name, t.ComputeProvider)
	if len(t.ResourceIDs) == 0 && len(t.Endpoints) == 0 {
		fmt.Fprintf(w, "landlord recorded nothing it ran on %s; check there all the same.\n", t.ComputeProvider)
	} else {
		fmt.Fprintf(w, "These may still run on %s; remove them there if they do:\n", t.ComputeProvider)
		for _, k := range slices.Sorted(maps.Keys(t.ResourceIDs)) {
			fmt.Fprintf(w, "  %s %s\n", k, t.ResourceIDs[k])
		}
		for _, e := range t.Endpoints {
			fmt.Fprintf(w, "  endpoint %s (%s %d/%s)\n", e.Address, e.Container, e.ContainerPort, e.Protocol)
		}
	}
	out, err := c.Tenants().Delete(ctx, t.ID, client.DeleteOptions{Forget: true, IfMatch: t.Version})
	if err != nil {
		return exitFor(fmt.Errorf("forget tenant %s: %w", name, err))
	}
	if output != "table" {
		return printObject(cmd.OutOrStdout(), output, out)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "tenant %s forgotten: its record is deleted (landlord history %s shows it)\n", out.Name, out.ID)
	return nil
}
