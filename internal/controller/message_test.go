package controller_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// A status message says the cause first, without the tenant's own id, and
// the account of attempts after it, so that what a narrow line cuts is the
// account; and it says the operation that failed: a provision where an
// update found no workload. The attempt events keep the whole error.
func TestStatusMessages(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	opts := fast()
	opts.MaxRetries = 2
	opts.BaseBackoff = 200 * time.Millisecond
	opts.MaxBackoff = 200 * time.Millisecond
	e.run(t, opts)

	flaky := e.create(t, "flaky", `{"image":"a","x-mock":{"fail":"transient"}}`, nil)
	waitMessage(t, e, flaky.ID, "mock: provision: provisioning failed: injected transient failure (call 1) (provision attempt 1 of 3 failed; retrying in ")
	e.waitStatus(t, 30*time.Second, tenant.StatusFailed, flaky.ID)
	if evs := e.events(t, flaky.ID, tenant.EventAttempt); len(evs) != 3 || !strings.Contains(evs[0].Message, "provision attempt 1 of 3 failed: mock: provision tenant "+flaky.ID+": ") {
		t.Errorf("attempt events: %v", evs)
	}
	if got := e.get(t, flaky.ID).StatusMessage; !strings.HasPrefix(got, "mock: provision: provisioning failed: injected transient failure (call 3) (") ||
		!strings.HasSuffix(got, "(provision failed 3 times, all the attempts allowed; landlord stopped retrying: run landlord retry flaky, or change the tenant, to try again)") {
		t.Errorf("after the last attempt: %q", got)
	}

	// A tenant whose provision failed has no workload: the update that a
	// new desired state asks for provisions it, and a failure says so.
	broken := e.create(t, "broken", `{"image":"a","x-mock":{"fail":"terminal","operations":["provision"]}}`, nil)
	e.waitStatus(t, 30*time.Second, tenant.StatusFailed, broken.ID)
	cur := e.get(t, broken.ID)
	if _, err := e.store.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: json.RawMessage(`{"image":"b","x-mock":{"fail":"terminal","operations":["provision"]}}`)}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the new generation acted on", 30*time.Second, func() (bool, string) {
		got := e.get(t, broken.ID)
		return got.ObservedGeneration >= 2, fmt.Sprintf("%s %q", got.Status, got.StatusMessage)
	})
	got := e.get(t, broken.ID).StatusMessage
	if !strings.Contains(got, "(provision failed with a permanent error, which retrying cannot cure: change the tenant, or fix the cause and run landlord retry broken, to try again)") || strings.Contains(got, "update") {
		t.Errorf("a failed provision after an update found no workload: %q", got)
	}
}

func TestWithoutOwnID(t *testing.T) {
	const id = "01a211d4-5e3b-703e-ae78-73c31c8b34b1"
	for in, want := range map[string]string{
		"docker: tenant " + id + ": image of container app: provisioning failed: no such host": "docker: image of container app: provisioning failed: no such host",
		"mock: provision tenant " + id + ": provisioning failed: injected":                     "mock: provision: provisioning failed: injected",
		"nomad: update tenant " + id + ": update failed: tenant 01a211d4-ffff: busy":           "nomad: update: update failed: tenant 01a211d4-ffff: busy",
		"plain words": "plain words",
	} {
		if got := controller.WithoutOwnID(in, id); got != want {
			t.Errorf("withoutOwnID(%q) = %q, want %q", in, got, want)
		}
	}
}
