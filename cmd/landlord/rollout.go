package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func init() { commands = append(commands, newRolloutCommand) }

func newRolloutCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Move a plan's tenants from one version to another, in waves",
		Long: `A rollout moves the tenants of a plan (landlord plan) to one of its versions,
wave by wave: each wave starts when the tenants of the one before are ready
and have baked; failures beyond a budget halt it. landlord rollout plan shows
what a rollout would do, tenant by tenant; landlord rollout start starts it,
and the server's controller drives it. A plan has at most one rollout that
has not finished.`,
		Example: `  landlord rollout plan standard --wave name=canary,selector=ring=canary,count=1 --wave percent=30 --bake 10m
  landlord rollout start standard --wave name=canary,selector=ring=canary,count=1 --wave percent=30 --bake 10m --max-failures 1
  landlord rollout status ID --watch
  landlord rollout abort ID --rollback`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		// Run, so that an unknown verb is refused rather than shown help.
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newRolloutPlanCommand(), newRolloutStartCommand(), newRolloutListCommand(), newRolloutStatusCommand(),
		newRolloutActionCommand("pause"), newRolloutActionCommand("resume"), newRolloutActionCommand("abort"))
	return cmd
}

func newRolloutListCommand() *cobra.Command {
	var opts client.RolloutListOptions
	cmd := &cobra.Command{
		Use:   "list [--plan P] [--active]",
		Short: "List rollouts, newest first",
		Example: `  landlord rollout list --active
  landlord rollout list --plan standard -o json`,
		Long: `List rollouts, newest first: each one's plan and versions ("* → 3" takes
every version but 3), state, the wave in progress and how many tenants are
done.`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cf := addClientFlags(cmd)
	cmd.Flags().StringVar(&opts.Plan, "plan", "", "only the rollouts of this plan")
	cmd.Flags().BoolVar(&opts.Active, "active", false, "only the rollouts that have not finished (running, paused, halted or aborting)")
	_ = cmd.RegisterFlagCompletionFunc("plan", completePlanNames(cf))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		list, err := c.Rollouts().List(contextOf(cmd), opts)
		if err != nil {
			return exitFor(fmt.Errorf("list rollouts: %w", err))
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, list)
		}
		if len(list.Rollouts) == 0 {
			fmt.Fprintln(cmd.ErrOrStderr(), "no rollouts")
			return nil
		}
		return renderRollouts(cmd.OutOrStdout(), list.Rollouts, now())
	}
	return cmd
}

// rolloutActions describe pause, resume and abort.
var rolloutActions = map[string]struct{ short, long, example string }{
	"pause": {"Pause a running rollout", `Pause a running rollout: it changes no more tenants until resumed
(tenants already changing go on converging).`, `  landlord rollout pause standard
  landlord rollout pause 0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f10`},
	"resume": {"Resume a paused or halted rollout", `Resume a paused rollout, or one halted on its failure budget: it goes on
from where it stopped. Tenants that failed stay failed, and count against
the budget.`, `  landlord rollout resume standard`},
	"abort": {"End a rollout", `End a rollout for good. Tenants it changed stay on the new version, unless
--rollback: then it moves each back to the version it had, and ends when
they are.`, `  landlord rollout abort standard
  landlord rollout abort standard --rollback`},
}

// newRolloutActionCommand is rollout pause, resume or abort.
func newRolloutActionCommand(action string) *cobra.Command {
	doc := rolloutActions[action]
	cmd := &cobra.Command{
		Use:     action + " ROLLOUT",
		Short:   doc.short,
		Long:    doc.long + "\n\n" + rolloutArgHelp,
		Example: doc.example,
		Args:    cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	cmd.ValidArgsFunction = completeRolloutIDs(cf, true)
	var rollback bool
	if action == "abort" {
		cmd.Flags().BoolVar(&rollback, "rollback", false, "move the tenants the rollout changed back to the versions they had")
		cmd.Use += " [--rollback]"
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		ctx := contextOf(cmd)
		id, err := rolloutID(ctx, c, args[0])
		if err != nil {
			return err
		}
		var ro *client.Rollout
		switch action {
		case "pause":
			ro, err = c.Rollouts().Pause(ctx, id, client.ActionOptions{})
		case "resume":
			ro, err = c.Rollouts().Resume(ctx, id, client.ActionOptions{})
		case "abort":
			ro, err = c.Rollouts().Abort(ctx, id, rollback, client.ActionOptions{})
		}
		if err != nil {
			return exitFor(fmt.Errorf("%s rollout %s: %w", action, id, err))
		}
		return printRollout(cmd, cf.output, *ro)
	}
	return cmd
}

// printRollout writes a rollout in the output format.
func printRollout(cmd *cobra.Command, format string, ro client.Rollout) error {
	if format == "table" {
		return renderRollout(cmd.OutOrStdout(), ro, now())
	}
	return printObject(cmd.OutOrStdout(), format, ro)
}
