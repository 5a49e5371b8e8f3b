package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

// The verbs that act on one rollout take the name of a plan for the
// rollout of it that has not finished, as they take its id; a plan with
// none is exit code 3, pointing at rollout list.
func TestRolloutVerbsTakeAPlanName(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{})
	mustFleet(t, srv, 2, v2)
	started := mustRollout(t, mustRunCLI(t, srv, exitOK, "", "rollout", "start", "standard", "-o", "json").stdout)

	for _, step := range []struct {
		args  []string
		state string
	}{
		{[]string{"rollout", "status", "standard"}, client.RolloutRunning},
		{[]string{"rollout", "pause", "standard"}, client.RolloutPaused},
		{[]string{"rollout", "resume", "standard"}, client.RolloutRunning},
		// The id still names it.
		{[]string{"rollout", "status", started.ID}, client.RolloutRunning},
		{[]string{"rollout", "abort", "standard"}, client.RolloutAborted},
	} {
		t.Run(strings.Join(step.args, " "), func(t *testing.T) {
			ro := mustRollout(t, mustRunCLI(t, srv, exitOK, "", append(step.args, "-o", "json")...).stdout)
			if ro.ID != started.ID || ro.State != step.state {
				t.Errorf("rollout %s in state %s, want %s in state %s", ro.ID, ro.State, started.ID, step.state)
			}
		})
	}
	// Finished, it is no longer the plan's rollout under way.
	for _, args := range [][]string{{"rollout", "status", "standard"}, {"rollout", "resume", "nosuch"}} {
		res := mustRunCLI(t, srv, exitNotFound, "", args...)
		mustContain(t, "stderr", res.stderr, fmt.Sprintf("there is no rollout %q, and no plan of that name has a rollout under way; landlord rollout list --plan %s lists its rollouts (404 rollout_not_found)", args[2], args[2]))
	}
	// An id is taken as one, not looked up as a plan.
	res := mustRunCLI(t, srv, exitNotFound, "", "rollout", "status", "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f10")
	mustContain(t, "stderr", res.stderr, `there is no rollout "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f10"; landlord rollout list lists them (404 rollout_not_found)`)
}
