package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func init() { commands = append(commands, newListCommand) }

func newListCommand() *cobra.Command {
	var (
		opts     client.ListOptions
		statuses []string
		allPages bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List tenants",
		Long: `List tenants, a page at a time (--all-pages for all of them).

Filters combine: a tenant is listed when it is in one of the --status values,
has every --label, uses the --provider (in any of its placements) and
follows the --plan. Deleted tenants are listed with --include-deleted, or
when --status names deleted. PROVIDER of a tenant with placements is their
providers joined with + (docker+nomad; landlord get NAME shows each
placement). A tenant whose provider the server has not enabled is marked
"(not enabled)", or, when some of its placements' providers are enabled,
"(nomad not enabled)". PLAN, shown when a tenant listed follows a plan, is its plan and version,
"(pinned)" when rollouts leave it alone. ENDPOINTS shows a tenant's first
endpoint and how many more it has (landlord get NAME shows them all).

On a terminal, MESSAGE (and, when it must, ENDPOINTS) is cut to fit the
width, ending in …, and MESSAGE at 80 columns at most; written to a file or
a pipe, nothing is cut. landlord get NAME shows a tenant's message whole.`,
		Example: `  landlord list --status failed --status provisioning
  landlord list --label tier=gold --all-pages -o json
  landlord list --include-deleted --name-prefix acme
  landlord list --plan standard`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cf := addClientFlags(cmd)
	fs := cmd.Flags()
	fs.StringArrayVar(&statuses, "status", nil, "only tenants in this status (repeatable, or comma-separated)")
	fs.StringArrayVar(&opts.Labels, "label", nil, "only tenants with this label key=value (repeatable; all must match)")
	fs.StringVar(&opts.Provider, "provider", "", "only tenants of this compute provider (in any of their placements)")
	fs.StringVar(&opts.Plan, "plan", "", "only tenants that follow this plan")
	fs.StringVar(&opts.NamePrefix, "name-prefix", "", "only tenants whose name starts with this")
	fs.BoolVar(&opts.IncludeDeleted, "include-deleted", false, "list deleted tenants too")
	fs.BoolVar(&allPages, "all-pages", false, "list every page, not just the first")
	fs.IntVar(&opts.PageSize, "page-size", 0, fmt.Sprintf("tenants per page, 1 to %d (default the server's, %d)", client.MaxPageSize, client.DefaultPageSize))
	fs.StringVar(&opts.PageToken, "page-token", "", "start at this page (the next_page_token of the previous one)")
	_ = cmd.RegisterFlagCompletionFunc("plan", completePlanNames(cf))
	_ = cmd.RegisterFlagCompletionFunc("status", cobra.FixedCompletions([]string{
		client.StatusRequested, client.StatusProvisioning, client.StatusReady, client.StatusUpdating,
		client.StatusDeleting, client.StatusDeleted, client.StatusFailed,
	}, cobra.ShellCompDirectiveNoFileComp))

	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		if cmd.Flags().Changed("page-size") && (opts.PageSize < 1 || opts.PageSize > client.MaxPageSize) {
			return withExitCode(exitUsage, fmt.Errorf("--page-size %d: must be from 1 to %d", opts.PageSize, client.MaxPageSize))
		}
		for _, s := range statuses {
			for st := range strings.SplitSeq(s, ",") {
				if st = strings.TrimSpace(st); st != "" {
					opts.Statuses = append(opts.Statuses, st)
				}
			}
		}
		if _, err := parsePairs("label", opts.Labels); err != nil {
			return err
		}
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		var list *client.TenantList
		if allPages {
			list = &client.TenantList{Tenants: []client.Tenant{}}
			for t, err := range c.Tenants().All(contextOf(cmd), opts) {
				if err != nil {
					return exitFor(fmt.Errorf("list tenants: %w", err))
				}
				list.Tenants = append(list.Tenants, t)
			}
		} else if list, err = c.Tenants().List(contextOf(cmd), opts); err != nil {
			return exitFor(fmt.Errorf("list tenants: %w", err))
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, list)
		}
		if len(list.Tenants) == 0 {
			fmt.Fprintln(cmd.ErrOrStderr(), "no tenants")
			return nil
		}
		enabled := enabledProviders(contextOf(cmd), c)
		if err := renderTenants(cmd.OutOrStdout(), list.Tenants, now(), enabled, terminalWidth(cmd.OutOrStdout())); err != nil {
			return err
		}
		if n := countNotEnabled(list.Tenants, enabled); n > 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "%d of these tenants use a provider this server has not enabled: landlord leaves them as they are; "+
				"enable it again, or remove a record, destroying nothing, with: landlord delete NAME --forget\n", n)
		}
		if list.NextPageToken != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "more tenants: list them all with --all-pages, or the next page with --page-token %s\n", list.NextPageToken)
		}
		return nil
	}
	return cmd
}

// enabledProviders asks the server which providers it has enabled; nil
// (every provider counts as enabled) when it cannot say.
func enabledProviders(ctx context.Context, c *client.Client) func(string) bool {
	ps, err := c.Compute().Providers(ctx)
	if err != nil {
		return nil
	}
	names := map[string]bool{}
	for _, p := range ps.Providers {
		names[p.Name] = true
	}
	return func(name string) bool { return names[name] }
}

// countNotEnabled counts the live tenants a provider of which (of any of
// their placements) is not enabled.
func countNotEnabled(ts []client.Tenant, enabled func(string) bool) int {
	if enabled == nil {
		return 0
	}
	n := 0
	for _, t := range ts {
		if len(notEnabledOf(t, enabled)) > 0 {
			n++
		}
	}
	return n
}
