package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func init() { commands = append(commands, newPlanCommand) }

func newPlanCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Manage plans: named, versioned compute configs that tenants follow",
		Long: `A plan is a named line of compute_config versions, for one compute provider.
A tenant that follows a plan (landlord create NAME --plan PLAN) gets the
config of its plan version, with its own compute_config's values over it.
Publishing a version changes no tenant: new tenants get the plan's current
version, and a rollout (landlord rollout) moves the plan's tenants to
another, in waves.`,
		Example: `  landlord plan create standard --description 'the standard tier'
  landlord plan publish standard --config @standard.yaml --message 'nginx 1.27'
  landlord plan get standard`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		// Run, so that an unknown verb is refused rather than shown help.
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newPlanCreateCommand(), newPlanListCommand(), newPlanGetCommand(), newPlanPublishCommand(),
		newPlanVersionsCommand(), newPlanDeleteCommand())
	return cmd
}

func newPlanCreateCommand() *cobra.Command {
	var req client.CreatePlanRequest
	cmd := &cobra.Command{
		Use:   "create NAME [--provider P] [--description D]",
		Short: "Create a plan, without versions",
		Long: `Create a plan for a compute provider (the server's default one unless
--provider names another); publish its first version with landlord plan
publish.`,
		Example:           `  landlord plan create standard --provider docker --description 'the standard tier'`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cf := addClientFlags(cmd)
	cmd.Flags().StringVar(&req.Provider, "provider", "", "the compute provider of the plan's configs (default the server's default provider)")
	cmd.Flags().StringVar(&req.Description, "description", "", "what the plan is for")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		req.Name = args[0]
		p, err := c.Plans().Create(contextOf(cmd), req, client.CreatePlanOptions{})
		if err != nil {
			return exitFor(fmt.Errorf("create plan %s: %w", req.Name, err))
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, p)
		}
		if err := renderPlan(cmd.OutOrStdout(), *p, nil, now()); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "publish its first version with: landlord plan publish %s --config VALUE\n", p.Name)
		return nil
	}
	return cmd
}

func newPlanListCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the plans",
		Long: `List the plans: each one's provider, its current version (the one new
tenants get) and its latest.`,
		Example: `  landlord plan list
  landlord plan list -o json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cf := addClientFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		list, err := c.Plans().List(contextOf(cmd))
		if err != nil {
			return exitFor(fmt.Errorf("list plans: %w", err))
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, list)
		}
		if len(list.Plans) == 0 {
			fmt.Fprintln(cmd.ErrOrStderr(), "no plans; create one with: landlord plan create NAME")
			return nil
		}
		return renderPlans(cmd.OutOrStdout(), list.Plans, now())
	}
	return cmd
}

func newPlanDeleteCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a plan and its versions",
		Long: `Delete a plan and its versions. A plan that tenants follow, or that has a
rollout that has not finished, is refused: move its tenants off it (landlord
set NAME --plan OTHER, or --plan '') and finish or abort its rollout first.`,
		Example: `  landlord plan delete standard`,
		Args:    cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	cmd.ValidArgsFunction = firstArg(completePlanNames(cf))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		if err := c.Plans().Delete(contextOf(cmd), args[0]); err != nil {
			return exitFor(fmt.Errorf("delete plan %s: %w", args[0], err))
		}
		if cf.output != "table" {
			// The API answers a delete with nothing; this says what was
			// deleted, for scripts.
			return printObject(cmd.OutOrStdout(), cf.output, map[string]any{"name": args[0], "deleted": true})
		}
		fmt.Fprintf(cmd.OutOrStdout(), "deleted plan %s\n", args[0])
		return nil
	}
	return cmd
}
