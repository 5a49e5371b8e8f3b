package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

// watchFlags are --watch and its --timeout.
type watchFlags struct {
	watch   bool
	timeout time.Duration
}

func addWatchFlags(cmd *cobra.Command) *watchFlags {
	f := &watchFlags{}
	cmd.Flags().BoolVar(&f.watch, "watch", false, "follow the rollout's progress, wave by wave, until it completes (fail if it ends aborted or halts)")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 0, "how long --watch follows it (default until it ends; exit code 4 when it runs out)")
	return f
}

func (f *watchFlags) check(cmd *cobra.Command) error {
	if cmd.Flags().Changed("timeout") && !f.watch {
		return withExitCode(exitUsage, errors.New("--timeout needs --watch"))
	}
	if f.timeout < 0 {
		return withExitCode(exitUsage, fmt.Errorf("--timeout %s: must be positive", f.timeout))
	}
	return nil
}

// follow watches the rollout when --watch asks, then prints it as it
// ended (or as it is, when the watch failed).
func (f *watchFlags) follow(cmd *cobra.Command, c *client.Client, ro *client.Rollout, output string) error {
	if !f.watch {
		return printRollout(cmd, output, *ro)
	}
	last, err := watchRollout(cmd, c, ro.ID, f.timeout)
	if last != nil {
		if perr := printRollout(cmd, output, *last); perr != nil && err == nil {
			err = perr
		}
	}
	return err
}

func newRolloutStatusCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status ROLLOUT [--watch]",
		Short: "Show where a rollout stands",
		Long: `Show a rollout: its state, each wave's tenants by state (pending, changing,
done, failed, skipped, rolled back), the tenants that failed and those of
the wave in progress that wait for their maintenance windows.

--watch follows it until it ends, showing each wave's progress on standard
error: on a terminal, a block of lines redrawn in place; elsewhere, a line
each time one changes. It then prints the rollout, and exits 0 if the
rollout completed, 1 if it was aborted or halted on its failure budget (it
then waits for landlord rollout resume or abort). A paused rollout is
followed until someone resumes it.

` + rolloutArgHelp,
		Example: `  landlord rollout status 0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f10
  landlord rollout status standard --watch --timeout 1h`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	wf := addWatchFlags(cmd)
	cmd.ValidArgsFunction = completeRolloutIDs(cf, false)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		if err := wf.check(cmd); err != nil {
			return err
		}
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		id, err := rolloutID(contextOf(cmd), c, args[0])
		if err != nil {
			return err
		}
		ro, err := c.Rollouts().Get(contextOf(cmd), id)
		if err != nil {
			return exitFor(fmt.Errorf("rollout %s: %w", args[0], err))
		}
		return wf.follow(cmd, c, ro, cf.output)
	}
	return cmd
}
