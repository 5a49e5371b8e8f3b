package postgres

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Replicas starting together all ask for a lease that was never held: one
// gets it, the others are told who has it, and nobody gets an error from
// the primary key.
func TestConcurrentFirstAcquire(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	for round := range 5 {
		name := fmt.Sprintf("race-%d", round)
		const n = 8
		var wg sync.WaitGroup
		leases := make([]tenant.Lease, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				leases[i], errs[i] = s.AcquireLease(ctx, name, fmt.Sprintf("replica-%d", i), time.Minute)
			})
		}
		wg.Wait()
		winners := 0
		for i, err := range errs {
			switch {
			case err == nil:
				winners++
				if leases[i].Epoch != 1 || leases[i].Holder != fmt.Sprintf("replica-%d", i) {
					t.Errorf("%s: replica-%d got %+v", name, i, leases[i])
				}
			case errors.Is(err, tenant.ErrLeaseHeld):
				if leases[i].Epoch != 1 || leases[i].Holder == fmt.Sprintf("replica-%d", i) {
					t.Errorf("%s: replica-%d was told the lease is %+v", name, i, leases[i])
				}
			default:
				t.Errorf("%s: replica-%d: %v", name, i, err)
			}
		}
		if winners != 1 {
			t.Errorf("%s: %d replicas acquired the lease, want 1", name, winners)
		}
	}
}

// An observation waits for a change of hands in progress and is then
// fenced by it: the fence cannot pass on an epoch about to be replaced.
func TestFenceWaitsForAcquire(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	cur := mustCreate(t, s, "fenced")
	old, err := s.AcquireLease(ctx, tenant.ControllerLease, "replica-a", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// A takeover in progress: the lease row is locked and its epoch bumped,
	// not yet committed.
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM leases WHERE name = $1 FOR UPDATE`, tenant.ControllerLease); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE leases SET holder = 'replica-b', epoch = epoch + 1 WHERE name = $1`, tenant.ControllerLease); err != nil {
		t.Fatal(err)
	}
	result := make(chan error, 1)
	go func() {
		_, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Epoch: old.Epoch})
		result <- err
	}()
	select {
	case err := <-result:
		t.Fatalf("UpdateObserved did not wait for the takeover in progress: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-result; !errors.Is(err, tenant.ErrFenced) {
		t.Errorf("UpdateObserved after the takeover = %v, want ErrFenced", err)
	}
	if got, err := s.Get(ctx, cur.ID, tenant.GetOptions{}); err != nil || got.Status != tenant.StatusRequested {
		t.Errorf("the fenced observation changed the tenant: %+v, %v", got, err)
	}
}

// Leases use the store's clock, in UTC, to the microsecond; Release makes
// a lease expire at once, for anyone.
func TestLeaseClock(t *testing.T) {
	clock := time.Date(2030, 1, 2, 3, 4, 5, 678_901_234, time.FixedZone("X", 5*3600))
	var mu sync.Mutex
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	s, _ := mustOpen(t, Options{Now: now})
	l, err := s.AcquireLease(ctx, "clocked", "replica-a", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2030, 1, 1, 22, 5, 5, 678_901_000, time.UTC)
	if l.ExpiresAt != want {
		t.Errorf("ExpiresAt = %v, want %v", l.ExpiresAt, want)
	}
	if _, err := s.AcquireLease(ctx, "clocked", "replica-b", time.Minute); !errors.Is(err, tenant.ErrLeaseHeld) {
		t.Errorf("AcquireLease of a held lease = %v", err)
	}
	mu.Lock()
	clock = clock.Add(time.Minute) // exactly at expiry: expired
	mu.Unlock()
	taken, err := s.AcquireLease(ctx, "clocked", "replica-b", time.Minute)
	if err != nil || taken.Epoch != l.Epoch+1 {
		t.Fatalf("AcquireLease at expiry = %+v, %v", taken, err)
	}
	if err := s.ReleaseLease(ctx, "clocked", "replica-b", taken.Epoch); err != nil {
		t.Fatal(err)
	}
	again, err := s.AcquireLease(ctx, "clocked", "replica-c", time.Minute)
	if err != nil || again.Epoch != taken.Epoch+1 {
		t.Errorf("AcquireLease right after Release = %+v, %v", again, err)
	}
}
