package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

func TestTenantsReachReady(t *testing.T) {
	for _, tt := range []struct {
		name  string
		block string
	}{
		{"no failures", ``},
		{"failure_rate 0.3", `{"failure_rate": 0.3}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, openSQLite(t), tt.block)
			opts := fast()
			// An attempt (a provision and its status, or a status) fails
			// with a chance of 0.3 to 0.51 at failure_rate 0.3, so with
			// the default 11 attempts one of 1,000 tenants now and then
			// failed them all (seen in CI). With 31 attempts that chance
			// is below one in a million runs.
			opts.MaxRetries = 30
			e.run(t, opts)
			ids := e.createMany(t, "t", 1000, appConfig)
			e.waitStatus(t, 2*time.Minute, tenant.StatusReady, ids...)
			if got := e.mock.Workloads(); got != len(ids) {
				t.Errorf("%d mock workloads for %d tenants", got, len(ids))
			}
			retried := 0
			for _, id := range ids {
				got := e.get(t, id)
				if got.ObservedGeneration != got.Generation || got.Attempts != 0 || got.RetryAt != nil {
					t.Fatalf("ready tenant %s: observed %d of %d, attempts %d, retry at %v", got.Name, got.ObservedGeneration, got.Generation, got.Attempts, got.RetryAt)
				}
				if got.ResourceIDs["workload"] != "mock-"+id {
					t.Fatalf("ready tenant %s records resource ids %v; want those its Provision returned", got.Name, got.ResourceIDs)
				}
				if len(e.events(t, id, tenant.EventAttempt)) > 0 {
					retried++
				}
			}
			t.Logf("%d of %d tenants needed retries", retried, len(ids))
			if tt.block != "" && retried == 0 {
				t.Error("with failure_rate 0.3 no tenant's events show a retry")
			}
			if tt.block == "" && retried != 0 {
				t.Errorf("without failures %d tenants show retries", retried)
			}
		})
	}
}

func TestInjectedFailures(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	e.run(t, fast())

	terminal := e.create(t, "terminal", `{"image":"a","x-mock":{"fail":"terminal"}}`, nil)
	transient := e.create(t, "transient", `{"image":"a","x-mock":{"fail":"transient","fail_times":3}}`, nil)
	e.waitStatus(t, 30*time.Second, tenant.StatusFailed, terminal.ID)
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, transient.ID)

	got := e.get(t, terminal.ID)
	if !strings.Contains(got.StatusMessage, "injected terminal failure") || !strings.Contains(got.StatusMessage, "provision failed with a permanent error, which retrying cannot cure") || got.Attempts != 1 {
		t.Errorf("terminal failure: message %q, attempts %d", got.StatusMessage, got.Attempts)
	}
	if n := e.mock.Calls(terminal.ID, mock.OpProvision); n != 1 {
		t.Errorf("a terminal failure was retried: %d provision calls", n)
	}
	if attempts := e.events(t, transient.ID, tenant.EventAttempt); len(attempts) != 3 {
		t.Errorf("%d failed attempts recorded, want exactly 3: %v", len(attempts), attempts)
	} else if !strings.Contains(attempts[2].Message, "provision attempt 3 of 11 failed") {
		t.Errorf("attempt event = %q", attempts[2].Message)
	}
	if n := e.mock.Calls(transient.ID, mock.OpProvision); n != 4 {
		t.Errorf("%d provision calls, want 3 failures and 1 success", n)
	}
	var transitions []string
	for _, ev := range e.events(t, transient.ID, tenant.EventStatus) {
		transitions = append(transitions, string(ev.To))
	}
	if strings.Join(transitions, " ") != "provisioning ready" {
		t.Errorf("status events = %v", transitions)
	}
}

func TestRetriesRunOut(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	opts := fast()
	opts.MaxRetries = 3 // the first try and 3 retries
	e.run(t, opts)
	tn := e.create(t, "flaky", `{"image":"a","x-mock":{"fail":"transient"}}`, nil)
	e.waitStatus(t, 30*time.Second, tenant.StatusFailed, tn.ID)
	got := e.get(t, tn.ID)
	if !strings.Contains(got.StatusMessage, "provision failed 4 times, all the attempts allowed; landlord stopped retrying") || !strings.Contains(got.StatusMessage, "injected transient failure") {
		t.Errorf("message %q does not carry the attempt count and the cause", got.StatusMessage)
	}
	if evs := e.events(t, tn.ID, ""); len(e.events(t, tn.ID, tenant.EventAttempt)) != 4 {
		for _, ev := range evs {
			t.Logf("%s %s %s→%s gen %d: %s", ev.Time.Format("15:04:05.000000"), ev.Type, ev.From, ev.To, ev.Generation, ev.Message)
		}
		t.Errorf("%d attempt events, want 4", len(e.events(t, tn.ID, tenant.EventAttempt)))
	}
}

func TestUpdates(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	e.run(t, fast())
	tn := e.create(t, "acme", appConfig, nil)
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, tn.ID)
	cur := e.get(t, tn.ID)
	next, err := e.store.UpdateDesired(ctx, tn.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: json.RawMessage(`{"image":"example.com/app:2"}`)})
	if err != nil {
		t.Fatal(err)
	}
	e.waitSettled(t, next)
	st, err := e.mock.GetStatus(ctx, tn.ID)
	if err != nil || st.Containers[0].Image != "example.com/app:2" {
		t.Errorf("workload after update: %+v, %v", st, err)
	}
	var transitions []string
	for _, ev := range e.events(t, tn.ID, tenant.EventStatus) {
		transitions = append(transitions, string(ev.To))
	}
	if strings.Join(transitions, " ") != "provisioning ready updating ready" {
		t.Errorf("status events = %v", transitions)
	}
	if n := e.mock.Calls(tn.ID, mock.OpUpdate); n != 1 {
		t.Errorf("%d update calls, want 1", n)
	}
}

func TestUpdateInBackoffIsAppliedAtOnce(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	opts := fast()
	opts.BaseBackoff, opts.MaxBackoff = time.Hour, 2*time.Hour
	e.run(t, opts)
	tn := e.create(t, "acme", `{"image":"a","x-mock":{"fail":"transient"}}`, nil)
	var cur *tenant.Tenant
	poll.Until(t, "the first attempt fails", 30*time.Second, func() (bool, string) {
		cur = e.get(t, tn.ID)
		return cur.RetryAt != nil, fmt.Sprintf("%+v", cur)
	})
	if wait := time.Until(*cur.RetryAt); wait < 20*time.Minute {
		t.Fatalf("backoff is %s, want about an hour", wait)
	}
	if _, err := e.store.UpdateDesired(ctx, tn.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: json.RawMessage(`{"image":"b"}`)}); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, tn.ID)
}

func TestDeleteFromAnyState(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	opts := fast()
	opts.BaseBackoff, opts.MaxBackoff = time.Hour, 2*time.Hour
	e.run(t, opts)
	ready := e.create(t, "ready", appConfig, nil)
	failed := e.create(t, "failed", `{"image":"a","x-mock":{"fail":"terminal"}}`, nil)
	backingOff := e.create(t, "backing-off", `{"image":"a","x-mock":{"fail":"transient"}}`, nil)
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, ready.ID)
	e.waitStatus(t, 30*time.Second, tenant.StatusFailed, failed.ID)
	poll.Until(t, "backing-off backs off", 30*time.Second, func() (bool, string) {
		got := e.get(t, backingOff.ID)
		return got.RetryAt != nil, string(got.Status)
	})
	for _, tn := range []*tenant.Tenant{ready, failed, backingOff} {
		if _, err := e.store.RequestDeletion(ctx, tn.ID, 0, "test"); err != nil {
			t.Fatal(err)
		}
	}
	e.waitStatus(t, 30*time.Second, tenant.StatusDeleted, ready.ID, failed.ID, backingOff.ID)
	if n := e.mock.Workloads(); n != 0 {
		t.Errorf("%d workloads left after deleting every tenant", n)
	}
}

func TestDriftIsRepaired(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	opts := fast()
	opts.Resync = 50 * time.Millisecond
	e.run(t, opts)
	removed := e.create(t, "removed", appConfig, nil)
	crashed := e.create(t, "crashed", appConfig, nil)
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, removed.ID, crashed.ID)

	e.mock.Remove(removed.ID)
	if err := e.mock.Crash(crashed.ID, "app", 137); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{removed.ID, crashed.ID} {
		poll.Until(t, "drift of "+e.get(t, id).Name+" detected", 30*time.Second, func() (bool, string) {
			return len(e.events(t, id, tenant.EventDrift)) > 0, "no drift event"
		})
	}
	// The drift event is written before the status leaves ready, so wait
	// for the repair itself: the workload runs and the tenant is ready.
	for _, id := range []string{removed.ID, crashed.ID} {
		poll.Until(t, e.get(t, id).Name+" repaired", 30*time.Second, func() (bool, string) {
			st, err := e.mock.GetStatus(ctx, id)
			got := e.get(t, id)
			return err == nil && st.Containers[0].State == "running" && got.Status == tenant.StatusReady,
				fmt.Sprintf("%+v, %v (tenant %s)", st, err, got.Status)
		})
	}
	if n := e.mock.Workloads(); n != 2 {
		t.Errorf("%d workloads, want 2", n)
	}
}

func TestPausedTenantIsNotTouched(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	var seen results
	opts := fast()
	opts.Resync = 50 * time.Millisecond
	opts.Observer = &seen
	e.run(t, opts)
	pausedAtBirth := e.create(t, "paused", appConfig, map[string]string{wire.PausedAnnotation: "true"})
	tn := e.create(t, "acme", appConfig, nil)
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, tn.ID)

	cur := e.get(t, tn.ID)
	if _, err := e.store.UpdateDesired(ctx, tn.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: cur.ComputeConfig,
		Annotations: map[string]string{wire.PausedAnnotation: "true"}}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, e, tn.ID, tenant.EventPaused)
	e.mock.Remove(tn.ID)
	// Each resync queues both paused tenants: wait for three resyncs'
	// worth of reconciles after the removal.
	base := seen.total()
	poll.Until(t, "several resyncs after the removal", 30*time.Second, func() (bool, string) {
		n := seen.total() - base
		return n >= 6, fmt.Sprintf("%d reconciles", n)
	})
	if len(e.events(t, tn.ID, tenant.EventDrift)) != 0 || e.mock.Calls(tn.ID, mock.OpProvision) != 1 {
		t.Fatal("a paused tenant was repaired")
	}
	if got := e.get(t, pausedAtBirth.ID); got.Status != tenant.StatusRequested || e.mock.Calls(pausedAtBirth.ID, mock.OpProvision) != 0 {
		t.Errorf("a tenant paused from the start was provisioned: %s", got.Status)
	}
	if n := len(e.events(t, tn.ID, tenant.EventPaused)); n != 1 {
		t.Errorf("%d paused events, want 1", n)
	}

	cur = e.get(t, tn.ID)
	resumed, err := e.store.UpdateDesired(ctx, tn.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: cur.ComputeConfig})
	if err != nil {
		t.Fatal(err)
	}
	waitEvent(t, e, tn.ID, tenant.EventResumed)
	e.waitSettled(t, resumed)
	if _, err := e.mock.GetStatus(ctx, tn.ID); err != nil {
		t.Errorf("after resuming, the workload is still missing: %v", err)
	}
}

func waitEvent(t *testing.T, e *env, id string, typ tenant.EventType) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("a %s event for %s", typ, e.get(t, id).Name), 30*time.Second, func() (bool, string) {
		return len(e.events(t, id, typ)) > 0, "none"
	})
}

func TestCrashedControllerIsReplaced(t *testing.T) {
	e := newEnv(t, openSQLite(t), `{"latency": "5ms"}`)
	opts := fast()
	opts.ShutdownTimeout = time.Nanosecond // cut in-flight operations off
	stop := e.run(t, opts)
	ids := e.createMany(t, "t", 200, appConfig)
	// Stop abruptly while provisioning is under way.
	poll.Until(t, "20 tenants ready", 30*time.Second, func() (bool, string) {
		ready := 0
		for _, id := range ids {
			if e.get(t, id).Status == tenant.StatusReady {
				ready++
			}
		}
		if ready >= 20 {
			t.Logf("stopping the first controller with %d of %d tenants ready", ready, len(ids))
		}
		return ready >= 20, fmt.Sprintf("%d ready", ready)
	})
	stop()
	// A new process: new provider and controller, same platform and store.
	e.restartProvider(t, `{"latency": "5ms"}`)
	e.run(t, fast())
	e.waitStatus(t, 2*time.Minute, tenant.StatusReady, ids...)
	if n := e.mock.Workloads(); n != len(ids) {
		t.Errorf("%d workloads for %d tenants", n, len(ids))
	}
	for _, id := range ids {
		if n := e.mock.Containers(id); n != 1 {
			t.Errorf("tenant %s has %d containers, want 1", e.get(t, id).Name, n)
		}
	}
}

func TestBackoff(t *testing.T) {
	for attempt, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second, 9: 256 * time.Second, 10: 5 * time.Minute, 50: 5 * time.Minute} {
		for range 100 {
			got := controller.Backoff(attempt, time.Second, 5*time.Minute)
			if got < want/2 || got > want {
				t.Fatalf("backoff(%d) = %s, want within [%s, %s]", attempt, got, want/2, want)
			}
		}
	}
	seen := map[time.Duration]bool{}
	for range 100 {
		seen[controller.Backoff(3, time.Second, time.Minute)] = true
	}
	if len(seen) < 10 {
		t.Errorf("backoff is not jittered: %d distinct values in 100", len(seen))
	}
}

func TestSlowStartIsAwaited(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	opts := fast()
	opts.ProgressDeadline = 2 * time.Second
	e.run(t, opts)
	slow := e.create(t, "slow", `{"image":"a","x-mock":{"start_after":"300ms"}}`, nil)
	stuck := e.create(t, "stuck", `{"image":"a","x-mock":{"start_after":"1h"}}`, nil)
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, slow.ID)
	if n := e.mock.Calls(slow.ID, mock.OpProvision); n != 1 {
		t.Errorf("a slow start was provisioned %d times; polling must not provision again", n)
	}
	e.waitStatus(t, 30*time.Second, tenant.StatusFailed, stuck.ID)
	got := e.get(t, stuck.ID)
	if !strings.Contains(got.StatusMessage, "not running 2s after provisioning began") || !strings.Contains(got.StatusMessage, "state pending") {
		t.Errorf("message %q does not say the deadline passed and in which state", got.StatusMessage)
	}
}

func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	e := newEnv(t, openSQLite(t), `{"latency": "300ms"}`)
	opts := fast()
	opts.Workers = 2
	stop := e.run(t, opts)
	ids := e.createMany(t, "t", 6, appConfig)
	// Wait until two provisions are under way, then stop.
	poll.Until(t, "two provisions under way", 30*time.Second, func() (bool, string) {
		started := 0
		for _, id := range ids {
			started += e.mock.Calls(id, mock.OpProvision)
		}
		return started >= 2, fmt.Sprintf("%d started", started)
	})
	stop()
	ready, untouched := 0, 0
	for _, id := range ids {
		got := e.get(t, id)
		switch {
		case got.Status == tenant.StatusReady:
			ready++
		case got.Status == tenant.StatusRequested && e.mock.Calls(id, mock.OpProvision) == 0:
			untouched++
		default:
			t.Errorf("after a graceful stop %s is %s with %d provision calls: work was cut off", got.Name, got.Status, e.mock.Calls(id, mock.OpProvision))
		}
	}
	if ready < 2 || ready+untouched != len(ids) {
		t.Errorf("%d ready, %d untouched of %d; in-flight work must finish and no new work start", ready, untouched, len(ids))
	}
}

func TestRetryStateSurvivesRestart(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	opts := fast()
	opts.MaxRetries = 3 // 4 attempts in all
	stop := e.run(t, opts)
	tn := e.create(t, "flaky", `{"image":"a","x-mock":{"fail":"transient"}}`, nil)
	poll.Until(t, "two failed attempts", 30*time.Second, func() (bool, string) {
		n := e.get(t, tn.ID).Attempts
		return n >= 2, fmt.Sprintf("%d attempts", n)
	})
	stop()
	before := e.get(t, tn.ID).Attempts
	e.restartProvider(t, ``)
	e.run(t, opts)
	e.waitStatus(t, 30*time.Second, tenant.StatusFailed, tn.ID)
	got := e.get(t, tn.ID)
	if got.Attempts != 4 || !strings.Contains(got.StatusMessage, "provision failed 4 times, all the attempts allowed; landlord stopped retrying") {
		t.Errorf("after a restart at attempt %d: %d attempts, %q; the count must carry on, not start again", before, got.Attempts, got.StatusMessage)
	}
	if n := len(e.events(t, tn.ID, tenant.EventAttempt)); n != 4 {
		t.Errorf("%d attempt events, want 4", n)
	}
}

func TestDeleteWhileProvisioning(t *testing.T) {
	e := newEnv(t, openSQLite(t), `{"latency": "200ms"}`)
	e.run(t, fast())
	tn := e.create(t, "acme", appConfig, nil)
	poll.Until(t, "provisioning starts", 30*time.Second, func() (bool, string) {
		return e.mock.Calls(tn.ID, mock.OpProvision) > 0, "no provision"
	})
	if _, err := e.store.RequestDeletion(ctx, tn.ID, 0, "test"); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(t, 30*time.Second, tenant.StatusDeleted, tn.ID)
	if n := e.mock.Workloads(); n != 0 {
		t.Errorf("%d workloads left: a provision in flight outlived the deletion", n)
	}
}

func TestRunAgainAfterStop(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	c := controller.New(e.store, e.manager, fast())
	for round := range 3 {
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- c.Run(runCtx) }()
		go func() {
			for range 100 {
				c.Enqueue(tenant.NewID()) // unknown tenants: harmless
			}
		}()
		tn := e.create(t, fmt.Sprintf("round-%d", round), appConfig, nil)
		e.waitStatus(t, 30*time.Second, tenant.StatusReady, tn.ID)
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func TestOperationTimeoutIsAnAttempt(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	opts := fast()
	opts.OperationTimeout = 50 * time.Millisecond
	opts.MaxRetries = 2
	e.run(t, opts)
	tn := e.create(t, "slow", `{"image":"a","x-mock":{"latency":"1s"}}`, nil)
	e.waitStatus(t, 30*time.Second, tenant.StatusFailed, tn.ID)
	got := e.get(t, tn.ID)
	if got.Attempts != 3 || !strings.Contains(got.StatusMessage, "deadline exceeded") {
		t.Errorf("attempts %d, message %q; timed-out operations must count as failed attempts and say why", got.Attempts, got.StatusMessage)
	}
}

func TestProgressDeadlineCountsFromTheApply(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	opts := fast()
	opts.BaseBackoff, opts.MaxBackoff = 150*time.Millisecond, time.Second
	opts.ProgressDeadline = 500 * time.Millisecond
	e.run(t, opts)
	// Two failures take 225-450ms of backoff; the workload then starts in
	// 300ms: too late counted from the first try, in time from the apply.
	tn := e.create(t, "slow", `{"image":"a","x-mock":{"fail":"transient","fail_times":2,"start_after":"300ms"}}`, nil)
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, tn.ID)
	if n := len(e.events(t, tn.ID, tenant.EventAttempt)); n != 2 {
		t.Errorf("%d failed attempts, want 2", n)
	}
}

// What a provider reports during a long step is the tenant's status message
// while the step runs.
func TestProgressIsRecorded(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	opts := fast()
	opts.ShutdownTimeout = 10 * time.Millisecond // the provision below never ends by itself
	e.run(t, opts)
	slow := e.create(t, "pulling", `{"image":"a","x-mock":{"latency":"30s","progress":"pulling image a: 12 of 27 MB"}}`, nil)
	var got *tenant.Tenant
	poll.Until(t, "the progress report recorded", 20*time.Second, func() (bool, string) {
		got = e.get(t, slow.ID)
		return got.StatusMessage == "pulling image a: 12 of 27 MB", fmt.Sprintf("status message %q", got.StatusMessage)
	})
	if got.Status != tenant.StatusProvisioning {
		t.Errorf("status %s while the provider reports progress, want provisioning", got.Status)
	}
	// Progress is not history: no event carries it.
	for _, ev := range e.events(t, slow.ID, "") {
		if strings.Contains(ev.Message, "pulling image") {
			t.Errorf("an event records progress: %+v", ev)
		}
	}
}

// countingStore counts reads of single tenants.
type countingStore struct {
	tenant.Store
	gets atomic.Int64
}

func (s *countingStore) Get(ctx context.Context, idOrName string, opts tenant.GetOptions) (*tenant.Tenant, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, idOrName, opts)
}

// The resync asks the provider about every ready tenant, but one whose
// workload runs costs no read of its row and no trip through the queue.
func TestResyncLeavesHealthyTenantsAlone(t *testing.T) {
	store := &countingStore{Store: openSQLite(t)}
	e := newEnv(t, store, ``)
	opts := fast()
	opts.Resync = 20 * time.Millisecond
	e.run(t, opts)
	ids := e.createMany(t, "t", 20, appConfig)
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, ids...)

	// The write that made each tenant ready is announced, and a worker reads
	// the tenant once more; on a loaded machine that read can come after
	// the status is visible. So the test looks for a span of three resyncs
	// with no read at all: a resync that queued healthy tenants would read
	// in every span.
	var reads int64
	for range 5 {
		gets := store.gets.Load()
		statuses := e.mock.Calls(ids[0], mock.OpStatus)
		poll.Until(t, "a resync asks the provider three times", 30*time.Second, func() (bool, string) {
			n := e.mock.Calls(ids[0], mock.OpStatus) - statuses
			return n >= 3, fmt.Sprintf("%d asks", n)
		})
		if reads = store.gets.Load() - gets; reads == 0 {
			break
		}
	}
	if reads != 0 {
		t.Errorf("resyncs of healthy tenants read tenants one by one in every span of three resyncs (%d in the last), want a span with none", reads)
	}
	// A drifted one is still queued and repaired.
	e.mock.Remove(ids[3])
	poll.Until(t, "drift detected", 30*time.Second, func() (bool, string) {
		return len(e.events(t, ids[3], tenant.EventDrift)) > 0, "no drift event"
	})
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, ids[3])
}

// notifying is a Compute whose provider reports workload changes, as the
// Kubernetes provider's watch does; the test says when.
type notifying struct {
	*compute.Manager
	changed chan func(string)
}

func (n *notifying) WatchChanges(ctx context.Context, changed func(string)) {
	n.changed <- changed
	<-ctx.Done()
}

// A change the provider reports wakes the tenant at once: a workload that
// starts is ready without waiting for the next poll.
func TestChangeNotificationWakesTheTenant(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	n := &notifying{Manager: e.manager, changed: make(chan func(string), 1)}
	opts := fast()
	opts.PollInterval = time.Hour
	c := controller.New(e.store, n, opts)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })
	var notify func(string)
	select {
	case notify = <-n.changed:
	case <-time.After(30 * time.Second):
		t.Fatal("the controller never asked its Compute for changes")
	}

	// Both wait on a workload that starts 3s after it is provisioned, far
	// longer than a provision takes, and are polled once an hour.
	told := e.create(t, "told", `{"image":"a","x-mock":{"start_after":"3s"}}`, nil)
	untold := e.create(t, "untold", `{"image":"a","x-mock":{"start_after":"3s"}}`, nil)
	for _, id := range []string{told.ID, untold.ID} {
		poll.Until(t, e.get(t, id).Name+" waiting on a workload that runs", 30*time.Second, func() (bool, string) {
			tn := e.get(t, id)
			st, err := e.mock.GetStatus(ctx, id)
			return tn.Status == tenant.StatusProvisioning && strings.HasPrefix(tn.StatusMessage, "waiting for the workload") && err == nil && st.State == provider.StateRunning,
				fmt.Sprintf("%s %q, workload %v %v", tn.Status, tn.StatusMessage, st, err)
		})
	}
	notify(told.ID)
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, told.ID)
	if got := e.get(t, untold.ID); got.Status != tenant.StatusProvisioning {
		t.Errorf("the tenant nobody was told of is %s; with an hour's poll it must still be provisioning", got.Status)
	}
}
