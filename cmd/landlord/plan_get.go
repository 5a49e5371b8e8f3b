package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

// planWithVersions is what plan get prints with -o json or yaml: the plan,
// as the API shows it, and its versions.
type planWithVersions struct {
	client.Plan
	Versions []client.PlanVersion `json:"versions"`
}

func newPlanGetCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show a plan and its versions",
		Long: `Show a plan, its versions, oldest first, and the config of its current
version (the one new tenants get). -o json or yaml shows every version's
config.`,
		Example: `  landlord plan get standard
  landlord plan get standard -o yaml`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	cmd.ValidArgsFunction = firstArg(completePlanNames(cf))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		ctx := contextOf(cmd)
		p, err := c.Plans().Get(ctx, args[0])
		if err != nil {
			return exitFor(fmt.Errorf("plan %s: %w", args[0], err))
		}
		versions, err := c.Plans().Versions(ctx, p.Name)
		if err != nil {
			return exitFor(fmt.Errorf("plan %s: versions: %w", p.Name, err))
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, planWithVersions{Plan: *p, Versions: versions.Versions})
		}
		return renderPlan(cmd.OutOrStdout(), *p, versions.Versions, now())
	}
	return cmd
}

func newPlanVersionsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "versions NAME",
		Short: "List a plan's versions",
		Long: `List a plan's versions, oldest first: which is current (new tenants get
it), who published each and why. -o json or yaml shows their configs.`,
		Example: `  landlord plan versions standard
  landlord plan versions standard -o json | jq '.versions[-1].config'`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	cmd.ValidArgsFunction = firstArg(completePlanNames(cf))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		ctx := contextOf(cmd)
		versions, err := c.Plans().Versions(ctx, args[0])
		if err != nil {
			return exitFor(fmt.Errorf("plan %s: versions: %w", args[0], err))
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, versions)
		}
		if len(versions.Versions) == 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "plan %s has no versions; publish one with: landlord plan publish %s --config VALUE\n", args[0], args[0])
			return nil
		}
		// The current version is the plan's to say.
		var current int64
		if p, err := c.Plans().Get(ctx, args[0]); err == nil {
			current = p.CurrentVersion
		}
		return renderVersions(cmd.OutOrStdout(), versions.Versions, current, now())
	}
	return cmd
}
