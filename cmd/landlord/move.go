package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

func init() { commands = append(commands, newMoveCommand) }

func newMoveCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "move NAME --config VALUE [--to PROVIDER] | --plan PLAN[@VERSION] [--config VALUE] | --approve | --cancel",
		Short: "Move a tenant's placement to another provider, make-before-break",
		Long: `Move a tenant's placement to another provider, or to another place on the
same one, make-before-break. The controller provisions the placement's
workload on the target beside the one that serves, waits until it runs and
its endpoints answer, switches the placement (and the endpoints the tenant
shows) to it in one write, then destroys the source. Every step is
recorded: a landlord stopped between two of them goes on from there.

--config is the placement's compute_config on the target, in any form
create takes (inline JSON or YAML, @path, file://path, - for stdin); --to
sets its compute_provider. --plan NAME[@VERSION] makes the target follow a
plan, on the plan's provider (--config then holds the tenant's overrides,
none when left out): the tenant follows it from the switch. A tenant on a
plan moves only so. --placement names the placement, for a tenant of
several. --hold makes the move wait, with the target running, for
landlord move NAME --approve (a data cut-over, say).

--approve lets a held move switch, and tries a failed step of a move again.
--cancel, before the switch, destroys the target and leaves the source as
it was (run again, it tries a failed cancel again). After the switch, move
the placement back instead.

With --wait, a move waits until it is done (or, with --hold, until it
holds for the approval), a cancel until the target is gone.`,
		Example: `  landlord move acme --to nomad --config @acme.yaml --wait
  landlord move acme --plan standard-nomad --wait
  landlord move acme --placement web --to kubernetes --config @web.yaml --hold --wait
  landlord move acme --approve --wait
  landlord move acme --cancel`,
		Args: cobra.ExactArgs(1),
	}
	var (
		config, to, placement, plan string
		hold, approve, cancel       bool
	)
	cmd.Flags().StringVar(&config, "config", "", "the placement's compute_config on the target: JSON or YAML, @path, file://path, or - for stdin")
	cmd.Flags().StringVar(&to, "to", "", "the target provider (sets the config's "+client.SelectionKey+")")
	cmd.Flags().StringVar(&placement, "placement", "", "the placement to move, for a tenant of several")
	cmd.Flags().StringVar(&plan, "plan", "", "make the target follow this plan, on its provider: NAME for its current version, NAME@VERSION for another")
	cmd.Flags().BoolVar(&hold, "hold", false, "wait, with the target running, for landlord move NAME --approve before switching")
	cmd.Flags().BoolVar(&approve, "approve", false, "let a held move switch, or try a failed step of a move again")
	cmd.Flags().BoolVar(&cancel, "cancel", false, "cancel a move before its switch: its target is destroyed")
	cmd.MarkFlagsMutuallyExclusive("config", "approve", "cancel")
	cmd.MarkFlagsMutuallyExclusive("hold", "approve", "cancel")
	cmd.MarkFlagsMutuallyExclusive("to", "approve", "cancel")
	cmd.MarkFlagsMutuallyExclusive("plan", "approve", "cancel")
	cmd.MarkFlagsMutuallyExclusive("plan", "to")
	cf := addClientFlags(cmd)
	wf := addWaitFlags(cmd, "done moving")
	cmd.ValidArgsFunction = completeTenantNames(cf)
	_ = cmd.RegisterFlagCompletionFunc("plan", completePlanNames(cf))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cf.checkOutput(); err != nil {
			return err
		}
		if err := wf.check(cmd); err != nil {
			return err
		}
		if config == "" && plan == "" && !approve && !cancel {
			return withExitCode(exitUsage, errors.New("give the placement's config on the target (--config, with --to for its provider), or the plan it is to follow (--plan), or --approve or --cancel"))
		}
		name := args[0]
		c, err := cf.client(cmd)
		if err != nil {
			return err
		}
		ctx := contextOf(cmd)
		var t *client.Tenant
		switch {
		case approve:
			t, err = c.Tenants().ApproveMove(ctx, name, placement, client.UpdateOptions{})
		case cancel:
			t, err = c.Tenants().CancelMove(ctx, name, placement, client.UpdateOptions{})
		default:
			req := client.MoveRequest{Placement: placement, Hold: hold}
			if config != "" {
				if req.ComputeConfig, err = readConfig(config, cmd.InOrStdin()); err != nil {
					return withExitCode(exitUsage, err)
				}
				if req.ComputeConfig, err = withProvider(req.ComputeConfig, to); err != nil {
					return err
				}
			}
			if plan != "" {
				pn, version, err := parsePlanRef(plan)
				if err != nil {
					return err
				}
				req.Plan = &client.PlanChoice{Name: pn, Version: version}
			}
			t, err = c.Tenants().Move(ctx, name, req, client.UpdateOptions{})
		}
		if err != nil {
			return exitFor(fmt.Errorf("move tenant %s: %w", name, err))
		}
		if wf.wait {
			until := untilMoved
			if hold {
				until = untilHeld
			}
			if t, err = waitFor(cmd, c, *t, wf.timeout, until); err != nil {
				return exitFor(err)
			}
		}
		return printTenant(cmd, cf.output, *t)
	}
	return cmd
}

// moving returns the moves in progress of t's placements.
func moving(t client.Tenant) []*client.Move {
	var out []*client.Move
	for _, p := range t.Placements {
		if p.Move != nil {
			out = append(out, p.Move)
		}
	}
	return out
}

// untilMoved is done when no placement of the tenant moves and it is
// ready; a failed tenant (a move's step failed) is an error saying why.
func untilMoved(t client.Tenant) (bool, error) {
	if len(moving(t)) > 0 && t.Status != client.StatusFailed {
		return false, nil
	}
	return client.UntilReady(t)
}

// untilHeld is done when every move of the tenant holds for its approval.
func untilHeld(t client.Tenant) (bool, error) {
	moves := moving(t)
	if len(moves) == 0 {
		return client.UntilReady(t)
	}
	if t.Status == client.StatusFailed {
		return false, &client.TenantFailedError{Tenant: t}
	}
	for _, m := range moves {
		if m.Step != "awaiting_approval" {
			return false, nil
		}
	}
	return true, nil
}
