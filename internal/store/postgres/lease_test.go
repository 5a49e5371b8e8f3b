package postgres

import (
	"context"
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

// A fenced write (an observation, an event) waits for a change of hands in
// progress and is then fenced by it: the fence cannot pass on an epoch
// about to be replaced.
func TestFenceWaitsForAcquire(t *testing.T) {
	writes := map[string]func(s *Store, cur *tenant.Tenant, epoch int64) error{
		"UpdateObserved": func(s *Store, cur *tenant.Tenant, epoch int64) error {
			_, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Epoch: epoch})
			return err
		},
		"AppendEvent": func(s *Store, cur *tenant.Tenant, epoch int64) error {
			return s.AppendEvent(ctx, tenant.Event{TenantID: cur.ID, Type: tenant.EventNote, Message: "fenced", Epoch: epoch})
		},
	}
	for name, write := range writes {
		t.Run(name, func(t *testing.T) {
			s, _ := mustOpen(t, Options{})
			cur := mustCreate(t, s, "fenced")
			fence := tenant.FenceLease(cur.ID)
			old, err := s.AcquireLease(ctx, fence, "replica-a", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			// A takeover in progress: the lease row is locked and its epoch
			// bumped, not yet committed.
			tx, err := s.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, `SELECT 1 FROM leases WHERE name = $1 FOR UPDATE`, fence); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, `UPDATE leases SET holder = 'replica-b', epoch = epoch + 1 WHERE name = $1`, fence); err != nil {
				t.Fatal(err)
			}
			result := make(chan error, 1)
			go func() { result <- write(s, cur, old.Epoch) }()
			select {
			case err := <-result:
				t.Fatalf("%s did not wait for the takeover in progress: %v", name, err)
			case <-time.After(200 * time.Millisecond):
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-result; !errors.Is(err, tenant.ErrFenced) {
				t.Errorf("%s after the takeover = %v, want ErrFenced", name, err)
			}
			got, err := s.Get(ctx, cur.ID, tenant.GetOptions{})
			if err != nil || got.Status != tenant.StatusRequested {
				t.Errorf("the fenced write changed the tenant: %+v, %v", got, err)
			}
			events, err := s.ListEvents(ctx, cur.ID, tenant.EventListOptions{})
			if err != nil || len(events.Events) != 1 {
				t.Errorf("events after the fenced write = %+v, %v; want the created event alone", events, err)
			}
		})
	}
}

// Leases are judged by the database's clock, not the replica's: a replica
// whose clock runs an hour ahead cannot take over a lease that has not
// expired, and one whose clock runs an hour behind cannot extend its own
// past expiry. Expiry is in UTC, to the microsecond; Release makes a lease
// expire at once, for anyone.
func TestLeaseClock(t *testing.T) {
	ahead := func() time.Time { return time.Now().Add(time.Hour) }
	behind := func() time.Time { return time.Now().Add(-time.Hour) }
	a, url := mustOpen(t, Options{Now: behind})
	b, err := Open(ctx, url, Options{Now: ahead})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	before := time.Now()
	l, err := a.AcquireLease(ctx, "clocked", "replica-a", time.Minute)
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	// The database runs on this host in the tests: its clock is ours.
	const slack = 5 * time.Second
	if l.ExpiresAt.Location() != time.UTC || l.ExpiresAt.Nanosecond()%1000 != 0 ||
		l.ExpiresAt.Before(before.Add(time.Minute-slack)) || l.ExpiresAt.After(after.Add(time.Minute+slack)) {
		t.Errorf("ExpiresAt = %v, want a minute after %v in UTC, to the microsecond", l.ExpiresAt, before)
	}
	if _, err := b.AcquireLease(ctx, "clocked", "replica-b", time.Minute); !errors.Is(err, tenant.ErrLeaseHeld) {
		t.Errorf("AcquireLease of a held lease by a replica an hour ahead = %v, want ErrLeaseHeld", err)
	}

	short, err := a.AcquireLease(ctx, "short", "replica-a", 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := a.RenewLease(ctx, "short", "replica-a", short.Epoch, time.Minute); !errors.Is(err, tenant.ErrLeaseLost) {
		t.Errorf("RenewLease after expiry by a replica an hour behind = %v, want ErrLeaseLost", err)
	}
	if again, err := a.AcquireLease(ctx, "short", "replica-a", time.Minute); err != nil || again.Epoch != short.Epoch+1 {
		t.Errorf("AcquireLease of one's own expired lease = %+v, %v; want epoch %d", again, err, short.Epoch+1)
	}

	renewed, err := a.RenewLease(ctx, "clocked", "replica-a", l.Epoch, time.Hour)
	if err != nil || renewed.ExpiresAt.Before(l.ExpiresAt) {
		t.Fatalf("RenewLease = %+v, %v", renewed, err)
	}
	if err := a.ReleaseLease(ctx, "clocked", "replica-a", l.Epoch); err != nil {
		t.Fatal(err)
	}
	taken, err := b.AcquireLease(ctx, "clocked", "replica-b", time.Minute)
	if err != nil || taken.Epoch != l.Epoch+1 {
		t.Errorf("AcquireLease right after Release = %+v, %v", taken, err)
	}
	if err := a.ReleaseLease(ctx, "clocked", "replica-a", l.Epoch); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AcquireLease(ctx, "clocked", "replica-c", time.Minute); !errors.Is(err, tenant.ErrLeaseHeld) {
		t.Errorf("a stale Release freed the successor's lease: AcquireLease = %v", err)
	}
}

// holdPartitions makes holder the holder of every partition lease for an
// hour and returns the epoch that fences a write to a tenant by its id.
func holdPartitions(tb testing.TB, s *Store, holder string) func(tenantID string) int64 {
	tb.Helper()
	epochs := make([]int64, tenant.Partitions)
	for p := range tenant.Partitions {
		l, err := s.AcquireLease(context.Background(), tenant.PartitionLease(p), holder, time.Hour)
		if err != nil {
			tb.Fatal(err)
		}
		epochs[p] = l.Epoch
	}
	return func(id string) int64 { return epochs[tenant.PartitionOf(id)] }
}

// A replica renews its member lease and all its partition leases in one
// round trip, whatever their number, and lists the leases in another.
func TestRenewLeasesRoundTrips(t *testing.T) {
	trips := &roundTrips{}
	s, _ := mustOpen(t, Options{Tracer: trips, MaxConns: 1})
	var held []tenant.Lease
	for _, name := range append([]string{tenant.MemberLease("replica-a")}, partitionLeases()...) {
		l, err := s.AcquireLease(ctx, name, "replica-a", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	for round := range 2 { // the first prepares the statements
		before := trips.n.Load()
		lost, err := s.RenewLeases(ctx, "replica-a", held, time.Minute)
		if err != nil || len(lost) != 0 {
			t.Fatalf("RenewLeases = %v, %v", lost, err)
		}
		renew := trips.n.Load() - before
		before = trips.n.Load()
		if _, _, err := s.ListLeases(ctx, tenant.PartitionLeasePrefix); err != nil {
			t.Fatal(err)
		}
		list := trips.n.Load() - before
		if round == 1 && (renew != 1 || list != 1) {
			t.Errorf("renewing %d leases took %d round trips and listing them %d; want 1 and 1", len(held), renew, list)
		}
	}
}

func partitionLeases() []string {
	names := make([]string, tenant.Partitions)
	for p := range names {
		names[p] = tenant.PartitionLease(p)
	}
	return names
}
