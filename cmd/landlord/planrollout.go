package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jaxxstorm/landlord/client"
)

// rolloutArgHelp is what the rollout verbs that take a rollout say of
// their argument.
const rolloutArgHelp = `ROLLOUT is a rollout's id, or the name of a plan with a rollout that has
not finished (a plan has at most one): that rollout.`

// rolloutID is the id of the rollout arg names: arg itself when it reads
// as an id, else the rollout of plan arg that has not finished. A plan
// name never reads as an id (plan names follow the tenant name rules,
// which refuse UUIDs), so that neither shadows the other. When no plan of
// that name has a rollout under way, arg is returned as it is, for the
// server to answer 404 rollout_not_found (which cliProblem words for a
// plan name too).
func rolloutID(ctx context.Context, c *client.Client, arg string) (string, error) {
	if client.IsID(arg) {
		return arg, nil
	}
	list, err := c.Rollouts().List(ctx, client.RolloutListOptions{Plan: arg, Active: true})
	if err != nil {
		return "", exitFor(fmt.Errorf("rollouts of plan %s: %w", arg, err))
	}
	switch len(list.Rollouts) {
	case 0:
		return arg, nil
	case 1:
		return list.Rollouts[0].ID, nil
	}
	ids := make([]string, len(list.Rollouts))
	for i, ro := range list.Rollouts {
		ids[i] = ro.ID
	}
	// The server keeps to one; this is only said in case it did not.
	return "", withExitCode(exitFailure, errors.New("plan "+arg+" has more than one rollout under way ("+strings.Join(ids, ", ")+"): name one by its id"))
}

// rolloutNotFound is the words of a 404 rollout_not_found for plan, the
// argument of a rollout verb that is not a rollout id.
func rolloutNotFound(plan string) string {
	return fmt.Sprintf("there is no rollout %q, and no plan of that name has a rollout under way; landlord rollout list --plan %s lists its rollouts", plan, plan)
}
