package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func newRolloutPlanCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan PLAN [--to N] [--from N] [--wave SPEC]... [--bake D] [--max-failures N] [--deadline D]",
		Short: "Show what a rollout would do, tenant by tenant, and start nothing",
		Long: `Show what a rollout of a plan would do, and start nothing: per wave, each
tenant's versions, what the provider would do to its workload (replace it,
update it in place, or nothing) and how its effective config would change;
then the tenants it leaves alone (pinned, or already on the version) and
those whose maintenance windows are closed now. A version that some
tenant's own config does not validate with is refused, naming the tenant.

` + waveHelp,
		Example: `  landlord rollout plan standard
  landlord rollout plan standard --to 3 --wave name=canary,selector=ring=canary,count=1 --wave percent=30,max-in-flight=5
  landlord rollout plan standard --from 2 -o json`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	sf := addRolloutSpecFlags(cmd)
	cmd.ValidArgsFunction = firstArg(completePlanNames(cf))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		req, err := sf.request(cmd, args[0])
		if err != nil {
			return err
		}
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		fp, err := c.Rollouts().Plan(contextOf(cmd), req)
		if err != nil {
			return exitFor(fmt.Errorf("plan a rollout of %s: %w", req.Plan, err))
		}
		if cf.output != "table" {
			return printObject(cmd.OutOrStdout(), cf.output, fp)
		}
		return renderFleetPlan(cmd.OutOrStdout(), *fp, now())
	}
	return cmd
}

func newRolloutStartCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "start PLAN [--to N] [--from N] [--wave SPEC]... [--bake D] [--max-failures N] [--deadline D] [--watch]",
		Short: "Start a rollout of a plan",
		Long: `Start a rollout of a plan; the server's controller then drives it, wave by
wave. It asks nothing: it prints what the rollout will do (as landlord
rollout plan does; not with -o json or yaml), starts it, and prints it.
--watch then follows it as landlord rollout status --watch does.

` + waveHelp,
		Example: `  landlord rollout start standard --to 3 --wave name=canary,selector=ring=canary,count=1 --wave percent=30 --bake 10m --max-failures 1
  landlord rollout start standard --watch`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	sf := addRolloutSpecFlags(cmd)
	wf := addWatchFlags(cmd)
	cmd.ValidArgsFunction = firstArg(completePlanNames(cf))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		if err := wf.check(cmd); err != nil {
			return err
		}
		req, err := sf.request(cmd, args[0])
		if err != nil {
			return err
		}
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		ctx := contextOf(cmd)
		if cf.output == "table" {
			fp, err := c.Rollouts().Plan(ctx, req)
			if err != nil {
				return exitFor(fmt.Errorf("start a rollout of %s: %w", req.Plan, err))
			}
			if err := renderFleetPlan(cmd.OutOrStdout(), *fp, now()); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout())
		}
		ro, err := c.Rollouts().Start(ctx, req, client.StartOptions{})
		if err != nil {
			return exitFor(fmt.Errorf("start a rollout of %s: %w", req.Plan, err))
		}
		if cf.output == "table" {
			fmt.Fprintf(cmd.OutOrStdout(), "Started rollout %s.\n\n", ro.ID)
		}
		if err := wf.follow(cmd, c, ro, cf.output); err != nil || wf.watch {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "follow it with: landlord rollout status %s --watch\n", ro.ID)
		return nil
	}
	return cmd
}
