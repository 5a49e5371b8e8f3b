package postgres

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// The interleavings of follow.go, forced: a transaction held open on a
// connection of its own stands for the write that another waits for.

// mustFleetPlan creates plan name with versions versions.
func mustFleetPlan(t *testing.T, s *Store, name string, versions int) {
	t.Helper()
	if _, err := s.CreatePlan(ctx, &fleet.Plan{Name: name, Provider: "mock"}, "test"); err != nil {
		t.Fatal(err)
	}
	for range versions {
		if _, err := s.PublishVersion(ctx, name, json.RawMessage(`{}`), "", "test"); err != nil {
			t.Fatal(err)
		}
	}
}

// holdTx begins a transaction on a connection of its own, runs stmts in it
// and returns it, open; the test rolls it back if it does not commit it.
func holdTx(t *testing.T, s *Store, stmts ...func(tx pgx.Tx) error) pgx.Tx {
	t.Helper()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	for _, stmt := range stmts {
		if err := stmt(tx); err != nil {
			t.Fatal(err)
		}
	}
	return tx
}

// lockPlan is the statement that locks plan in mode.
func lockPlan(plan, mode string) func(tx pgx.Tx) error {
	return func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT 1 FROM plans WHERE name = $1 FOR `+mode, plan)
		return err
	}
}

// insertFollower inserts tenant name following plan at version 1,
// unpinned, as a create on the plan does after locking it.
func insertFollower(s *Store, name, plan string) func(tx pgx.Tx) error {
	return func(tx pgx.Tx) error {
		out, ev, err := tenant.NewTenant(&tenant.Tenant{Name: name, Provider: "mock", ComputeConfig: []byte(`{}`),
			Plan: &tenant.PlanRef{Name: plan, Version: 1}}, "test", s.now())
		if err != nil {
			return err
		}
		return write(ctx, tx, true, false, out, []tenant.Event{ev})
	}
}

// awaitLockWait waits until a connection to the test's database waits for
// a lock. It fails the test when the write that should wait, whose error
// written carries, returns first.
func awaitLockWait(t *testing.T, s *Store, what string, written <-chan error) {
	t.Helper()
	poll.Until(t, what+" waits for a lock", 10*time.Second, func() (bool, string) {
		var n int
		err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return true, ""
		}
		select {
		case err := <-written:
			t.Fatalf("%s returned (%v) without waiting for the transaction that holds the plan", what, err)
		default:
		}
		return false, "no connection waits for a lock"
	})
}

// async runs fn in a goroutine and returns a channel of its error.
func async(fn func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- fn() }()
	return ch
}

// A deletion that waited for a tenant's create on the plan sees the
// tenant: the check reads after the lock, in a statement of its own.
func TestDeletePlanSeesFollowerCommittedWhileItWaited(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	mustFleetPlan(t, s, "standard", 1)
	create := holdTx(t, s, lockPlan("standard", "SHARE"), insertFollower(s, "late", "standard"))
	deleted := async(func() error { return s.DeletePlan(ctx, "standard") })
	awaitLockWait(t, s, "DeletePlan", deleted)
	if err := create.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-deleted; !errors.Is(err, fleet.ErrInUse) {
		t.Fatalf("DeletePlan = %v, want ErrInUse: tenant late follows the plan", err)
	}
	if _, err := s.GetPlan(ctx, "standard"); err != nil {
		t.Errorf("GetPlan after a refused deletion: %v", err)
	}
}

// A rollout's completion that waited for a tenant's create on the plan
// sees the tenant, and is refused until it is a member.
func TestCompletionSeesFollowerCommittedWhileItWaited(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	mustFleetPlan(t, s, "standard", 2)
	r, err := s.CreateRollout(ctx, &fleet.Rollout{Spec: fleet.Spec{Plan: "standard", To: 2}, CreatedBy: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	create := holdTx(t, s, lockPlan("standard", "SHARE"), insertFollower(s, "late", "standard"))
	completed := async(func() error {
		r.State = fleet.StateCompleted
		_, err := s.UpdateRollout(ctx, r)
		return err
	})
	awaitLockWait(t, s, "UpdateRollout to completed", completed)
	if err := create.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-completed; !errors.Is(err, fleet.ErrConflict) {
		t.Fatalf("UpdateRollout to completed = %v, want ErrConflict: tenant late is no member", err)
	}
	if p, err := s.GetPlan(ctx, "standard"); err != nil || p.Current != 1 {
		t.Errorf("after a refused completion: plan %+v, %v; want current version 1", p, err)
	}
}

// A tenant's write onto a plan that waited for the plan's deletion finds
// the plan gone: it locks the plan FOR SHARE, and reads it after the wait.
func TestFollowWaitsForDeletePlan(t *testing.T) {
	for _, tt := range []struct {
		name  string
		write func(s *Store, plan string) error
	}{
		{"Create", func(s *Store, plan string) error {
			_, err := s.Create(ctx, &tenant.Tenant{Name: "late", Provider: "mock", ComputeConfig: []byte(`{}`),
				Plan: &tenant.PlanRef{Name: plan, Version: 1}}, "test")
			return err
		}},
		{"CreateIdempotent", func(s *Store, plan string) error {
			res, _, err := s.ReserveIdempotent(ctx, "alice", "key", "hash", time.Hour)
			if err != nil {
				return err
			}
			_, err = s.CreateIdempotent(ctx, &tenant.Tenant{Name: "late", Provider: "mock", ComputeConfig: []byte(`{}`),
				Plan: &tenant.PlanRef{Name: plan, Version: 1}}, "alice", res,
				func(*tenant.Tenant) (tenant.IdempotentResponse, error) {
					return tenant.IdempotentResponse{Status: 201}, nil
				})
			return err
		}},
		{"UpdateDesired", func(s *Store, plan string) error {
			cur, err := s.Get(ctx, "plain", tenant.GetOptions{})
			if err != nil {
				return err
			}
			_, err = s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: cur.ComputeConfig,
				Plan: &tenant.PlanRef{Name: plan, Version: 1}, Actor: "test"})
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := mustOpen(t, Options{})
			mustFleetPlan(t, s, "standard", 1)
			mustCreate(t, s, "plain")
			deletion := holdTx(t, s, lockPlan("standard", "UPDATE"), func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, `DELETE FROM plans WHERE name = 'standard'`)
				return err
			})
			written := async(func() error { return tt.write(s, "standard") })
			awaitLockWait(t, s, tt.name, written)
			if err := deletion.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-written; !errors.Is(err, tenant.ErrPlanNotFound) {
				t.Fatalf("%s onto a plan deleted meanwhile = %v, want ErrPlanNotFound", tt.name, err)
			}
			page, err := s.List(ctx, tenant.ListOptions{Plan: "standard"})
			if err != nil || len(page.Tenants) > 0 {
				t.Errorf("List(Plan standard) = %+v, %v; want no follower of a deleted plan", page, err)
			}
		})
	}
}

// A create on a plan stays one round trip, plain or idempotent; an
// UpdateDesired that changes the plan takes one more than one that does
// not (three, not two), for the plan's check and lock.
func TestFollowRoundTrips(t *testing.T) {
	trips := &roundTrips{}
	s, _ := mustOpen(t, Options{Tracer: trips, MaxConns: 1})
	mustFleetPlan(t, s, "standard", 2)
	count := func(what string, want int64, fn func() error) {
		t.Helper()
		if err := fn(); err != nil { // warm: statements prepared, the connection open
			t.Fatalf("%s: %v", what, err)
		}
		before := trips.n.Load()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := trips.n.Load() - before; got != want {
			t.Errorf("%s: %d round trips, want %d", what, got, want)
		}
	}
	n := 0
	count("Create on a plan", 1, func() error {
		n++
		_, err := s.Create(ctx, &tenant.Tenant{Name: fmt.Sprint("t", n), Provider: "mock", ComputeConfig: []byte(`{}`),
			Plan: &tenant.PlanRef{Name: "standard", Version: 1}}, "test")
		return err
	})
	reservations := make(chan tenant.IdempotentResponse, 2)
	for i := range 2 {
		res, _, err := s.ReserveIdempotent(ctx, "alice", fmt.Sprint("key-", i), "hash", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		reservations <- res
	}
	count("CreateIdempotent on a plan", 1, func() error {
		n++
		_, err := s.CreateIdempotent(ctx, &tenant.Tenant{Name: fmt.Sprint("t", n), Provider: "mock", ComputeConfig: []byte(`{}`),
			Plan: &tenant.PlanRef{Name: "standard", Version: 1}}, "alice", <-reservations,
			func(*tenant.Tenant) (tenant.IdempotentResponse, error) {
				return tenant.IdempotentResponse{Status: 201}, nil
			})
		return err
	})
	cur, err := s.Get(ctx, "t1", tenant.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pinned, image := false, 0
	update := func() error {
		image++
		next, err := s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: []byte(fmt.Sprintf(`{"image":"app:%d"}`, image)),
			Plan: &tenant.PlanRef{Name: "standard", Version: 1, Pinned: pinned}, Actor: "test"})
		if err == nil {
			cur = next
		}
		return err
	}
	count("UpdateDesired of the plan (its pin)", 3, func() error { pinned = !pinned; return update() })
	count("UpdateDesired keeping the plan", 2, update)
}
