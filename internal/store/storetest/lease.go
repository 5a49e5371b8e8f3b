package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

func leases(t *testing.T, s tenant.Store) tenant.LeaseStore {
	t.Helper()
	ls, ok := s.(tenant.LeaseStore)
	if !ok {
		t.Fatalf("%T does not implement tenant.LeaseStore: replicas cannot share the controller's work on it", s)
	}
	return ls
}

func testLeases(t *testing.T, s tenant.Store) {
	t.Run("AcquireRenewRelease", func(t *testing.T) { testLeaseLifecycle(t, s) })
	t.Run("ListLeases", func(t *testing.T) { testListLeases(t, s) })
	t.Run("RenewLeases", func(t *testing.T) { testRenewLeases(t, s) })
}

func testLeaseLifecycle(t *testing.T, s tenant.Store) {
	ls := leases(t, s)
	const ttl = time.Minute
	a, err := ls.AcquireLease(ctx, "test", "replica-a", ttl)
	if err != nil {
		t.Fatalf("first AcquireLease: %v", err)
	}
	if a.Holder != "replica-a" || a.Epoch < 1 || a.ExpiresAt.Before(time.Now().Add(ttl/2)) {
		t.Errorf("acquired lease = %+v", a)
	}
	held, err := ls.AcquireLease(ctx, "test", "replica-b", ttl)
	wantErr(t, "AcquireLease of a held lease", err, tenant.ErrLeaseHeld)
	if held.Holder != "replica-a" || held.Epoch != a.Epoch {
		t.Errorf("ErrLeaseHeld came with lease %+v, want the holder's", held)
	}
	again, err := ls.AcquireLease(ctx, "test", "replica-a", ttl)
	if err != nil || again.Epoch != a.Epoch {
		t.Errorf("re-acquiring one's own lease = %+v, %v; want the same epoch", again, err)
	}
	renewed, err := ls.RenewLease(ctx, "test", "replica-a", a.Epoch, ttl)
	if err != nil || renewed.Epoch != a.Epoch || renewed.ExpiresAt.Before(a.ExpiresAt) {
		t.Errorf("RenewLease = %+v, %v", renewed, err)
	}
	_, err = ls.RenewLease(ctx, "test", "replica-b", a.Epoch, ttl)
	wantErr(t, "RenewLease by a non-holder", err, tenant.ErrLeaseLost)

	// An expired lease changes hands with a new epoch.
	short, err := ls.AcquireLease(ctx, "short", "replica-a", 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	taken, err := ls.AcquireLease(ctx, "short", "replica-b", ttl)
	if err != nil || taken.Holder != "replica-b" || taken.Epoch != short.Epoch+1 {
		t.Fatalf("taking an expired lease = %+v, %v; want replica-b at epoch %d", taken, err, short.Epoch+1)
	}
	_, err = ls.RenewLease(ctx, "short", "replica-a", short.Epoch, ttl)
	wantErr(t, "RenewLease of a lease taken over", err, tenant.ErrLeaseLost)
	late, err := ls.AcquireLease(ctx, "late", "replica-a", 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	_, err = ls.RenewLease(ctx, "late", "replica-a", late.Epoch, ttl)
	wantErr(t, "RenewLease after expiry, not yet taken over", err, tenant.ErrLeaseLost)
	_, err = ls.AcquireLease(ctx, "zero", "replica-a", 0)
	wantErr(t, "AcquireLease with no ttl", err, tenant.ErrInvalid)

	// Release lets a successor in at once.
	if err := ls.ReleaseLease(ctx, "test", "replica-a", a.Epoch); err != nil {
		t.Fatal(err)
	}
	next, err := ls.AcquireLease(ctx, "test", "replica-b", ttl)
	if err != nil || next.Epoch != a.Epoch+1 {
		t.Errorf("AcquireLease after release = %+v, %v; want epoch %d", next, err, a.Epoch+1)
	}
	if err := ls.ReleaseLease(ctx, "test", "replica-a", a.Epoch); err != nil {
		t.Errorf("releasing a lease no longer held = %v, want nil", err)
	}
	_, err = ls.RenewLease(ctx, "test", "replica-a", a.Epoch, ttl)
	wantErr(t, "RenewLease of a released lease", err, tenant.ErrLeaseLost)
	if got, err := ls.RenewLease(ctx, "test", "replica-b", next.Epoch, ttl); err != nil || got.Holder != "replica-b" {
		t.Errorf("a stale release must not free the successor's lease: %+v, %v", got, err)
	}
}

func testFencing(t *testing.T, s tenant.Store) {
	ls := leases(t, s)
	cur := mustCreate(t, s, newTenant("acme"))
	fence := tenant.FenceLease(cur.ID)
	old, err := ls.AcquireLease(ctx, fence, "replica-a", 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	obs := tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Epoch: old.Epoch}
	if _, err := s.UpdateObserved(ctx, cur.ID, obs); err != nil {
		t.Fatalf("UpdateObserved with the current epoch: %v", err)
	}
	time.Sleep(30 * time.Millisecond)
	successor, err := ls.AcquireLease(ctx, fence, "replica-b", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// The paused ex-leader wakes up and reports.
	obs.Status, obs.Message = tenant.StatusReady, "from the ex-leader"
	_, err = s.UpdateObserved(ctx, cur.ID, obs)
	wantErr(t, "UpdateObserved with a stale epoch", err, tenant.ErrFenced)
	if got := mustGet(t, s, cur.ID); got.Status != tenant.StatusProvisioning {
		t.Errorf("a fenced write changed the tenant: %s %q", got.Status, got.StatusMessage)
	}
	obs.Epoch = successor.Epoch
	obs.Message = "from the leader"
	if _, err := s.UpdateObserved(ctx, cur.ID, obs); err != nil {
		t.Errorf("UpdateObserved with the successor's epoch: %v", err)
	}
	// Events are fenced the same way.
	before := len(mustEvents(t, s, cur.ID))
	err = s.AppendEvent(ctx, tenant.Event{TenantID: cur.ID, Type: tenant.EventAttempt, Message: "from the ex-leader", Epoch: old.Epoch})
	wantErr(t, "AppendEvent with a stale epoch", err, tenant.ErrFenced)
	if err := s.AppendEvent(ctx, tenant.Event{TenantID: cur.ID, Type: tenant.EventAttempt, Message: "from the leader", Epoch: successor.Epoch}); err != nil {
		t.Errorf("AppendEvent with the current epoch: %v", err)
	}
	if got := len(mustEvents(t, s, cur.ID)); got != before+1 {
		t.Errorf("%d events after one fenced and one accepted, want %d", got, before+1)
	}

	// The fence of a tenant is its own partition's lease: the lease of
	// another partition, at whatever epoch, is not consulted.
	other := mustCreate(t, s, newTenant("other"))
	for tenant.PartitionOf(other.ID) == tenant.PartitionOf(cur.ID) {
		other = mustCreate(t, s, newTenant(fmt.Sprintf("other-%d", time.Now().UnixNano())))
	}
	otherLease, err := ls.AcquireLease(ctx, tenant.FenceLease(other.ID), "replica-a", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// The lease of cur's partition moves on to an epoch other's never had.
	if err := ls.ReleaseLease(ctx, fence, "replica-b", successor.Epoch); err != nil {
		t.Fatal(err)
	}
	moved, err := ls.AcquireLease(ctx, fence, "replica-c", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if moved.Epoch == otherLease.Epoch {
		t.Fatalf("test set-up: both partition leases at epoch %d", moved.Epoch)
	}
	_, err = s.UpdateObserved(ctx, other.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Epoch: moved.Epoch})
	wantErr(t, "UpdateObserved with the epoch of another partition's lease", err, tenant.ErrFenced)
	if _, err := s.UpdateObserved(ctx, other.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Epoch: otherLease.Epoch}); err != nil {
		t.Errorf("UpdateObserved with the epoch of its own partition's lease: %v", err)
	}
}

// testListLeases: ListLeases returns the leases with a prefix, in name
// order, expired ones included, with a clock that judges them.
func testListLeases(t *testing.T, s tenant.Store) {
	ls := leases(t, s)
	before := time.Now()
	for _, name := range []string{"list/b", "list/a", "list/c", "listed", "other/a"} {
		if _, err := ls.AcquireLease(ctx, name, "replica-"+name, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	short, err := ls.AcquireLease(ctx, "list/short", "replica-s", 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	got, now, err := ls.ListLeases(ctx, "list/")
	if err != nil {
		t.Fatal(err)
	}
	// The store's clock may not be ours (PostgreSQL's), but in the tests it
	// runs on this host.
	if now.Before(before.Add(-5*time.Second)) || now.After(time.Now().Add(5*time.Second)) || now.Location() != time.UTC {
		t.Errorf("ListLeases's clock = %v, want about %v, in UTC", now, time.Now())
	}
	var names []string
	for _, l := range got {
		names = append(names, l.Name)
		live := l.ExpiresAt.After(now)
		if live != (l.Name != "list/short") {
			t.Errorf("lease %s expires at %v, judged by %v: live %v", l.Name, l.ExpiresAt, now, live)
		}
		if l.Holder != "replica-"+l.Name && l.Name != "list/short" || l.Epoch < 1 {
			t.Errorf("listed lease %+v", l)
		}
		if l.Name == "list/short" && (l.Holder != "replica-s" || l.Epoch != short.Epoch) {
			t.Errorf("listed expired lease %+v, want %+v", l, short)
		}
	}
	if want := []string{"list/a", "list/b", "list/c", "list/short"}; !slices.Equal(names, want) {
		t.Errorf("ListLeases(list/) = %v, want %v", names, want)
	}
	if got, _, err := ls.ListLeases(ctx, "nothing/"); err != nil || len(got) != 0 {
		t.Errorf("ListLeases of a prefix nothing has = %v, %v", got, err)
	}
	// A prefix is not a pattern.
	if got, _, err := ls.ListLeases(ctx, "list%"); err != nil || len(got) != 0 {
		t.Errorf("ListLeases(list%%) = %v, %v; want none", got, err)
	}
	all, _, err := ls.ListLeases(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, l := range all {
		names = append(names, l.Name)
	}
	for _, want := range []string{"list/a", "listed", "other/a"} {
		if !slices.Contains(names, want) {
			t.Errorf("ListLeases of every lease = %v, without %s", names, want)
		}
	}
}

// testRenewLeases: RenewLeases extends every lease the holder still has at
// its epoch, at once, and names those it could not.
func testRenewLeases(t *testing.T, s tenant.Store) {
	ls := leases(t, s)
	const ttl = time.Minute
	var held []tenant.Lease
	for i := range 40 {
		l, err := ls.AcquireLease(ctx, fmt.Sprintf("renew/%02d", i), "replica-a", ttl)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	// Four are lost in four ways: expired, released, taken over, and held
	// at another epoch than the one given.
	expired, err := ls.AcquireLease(ctx, "renew/expired", "replica-a", 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	released, err := ls.AcquireLease(ctx, "renew/released", "replica-a", ttl)
	if err != nil {
		t.Fatal(err)
	}
	if err := ls.ReleaseLease(ctx, released.Name, "replica-a", released.Epoch); err != nil {
		t.Fatal(err)
	}
	taken, err := ls.AcquireLease(ctx, "renew/taken", "replica-a", 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	if _, err := ls.AcquireLease(ctx, taken.Name, "replica-b", ttl); err != nil {
		t.Fatal(err)
	}
	stale, err := ls.AcquireLease(ctx, "renew/stale", "replica-a", ttl)
	if err != nil {
		t.Fatal(err)
	}
	wrong := stale
	wrong.Epoch++
	lostWant := []tenant.Lease{expired, released, taken, wrong}
	all := append(slices.Clone(held), lostWant...)

	before := time.Now()
	lost, err := ls.RenewLeases(ctx, "replica-a", all, ttl)
	if err != nil {
		t.Fatal(err)
	}
	var lostNames []string
	for _, l := range lost {
		lostNames = append(lostNames, l.Name)
	}
	if want := []string{"renew/expired", "renew/released", "renew/taken", "renew/stale"}; !slices.Equal(lostNames, want) {
		t.Errorf("RenewLeases lost %v, want %v", lostNames, want)
	}
	listed, now, err := ls.ListLeases(ctx, "renew/")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]tenant.Lease{}
	for _, l := range listed {
		byName[l.Name] = l
	}
	for _, h := range held {
		l := byName[h.Name]
		if l.Holder != "replica-a" || l.Epoch != h.Epoch || l.ExpiresAt.Before(before.Add(ttl-5*time.Second)) || !l.ExpiresAt.After(now) {
			t.Errorf("lease %s after RenewLeases = %+v; want replica-a's at epoch %d, a TTL from %v", h.Name, l, h.Epoch, before)
		}
	}
	if l := byName["renew/taken"]; l.Holder != "replica-b" {
		t.Errorf("RenewLeases of a lease taken over changed it: %+v", l)
	}
	if l := byName["renew/expired"]; l.ExpiresAt.After(now) {
		t.Errorf("RenewLeases revived an expired lease: %+v", l)
	}
	if l := byName["renew/released"]; l.ExpiresAt.After(now) {
		t.Errorf("RenewLeases revived a released lease: %+v", l)
	}
	if l := byName["renew/stale"]; !l.ExpiresAt.Equal(stale.ExpiresAt) {
		t.Errorf("RenewLeases at the wrong epoch extended the lease: %+v, was %+v", l, stale)
	}
	// Another holder renews nothing of replica-a's.
	if lost, err := ls.RenewLeases(ctx, "replica-b", held[:3], ttl); err != nil || len(lost) != 3 {
		t.Errorf("RenewLeases of another's leases = %v, %v; want all 3 lost", lost, err)
	}
	if lost, err := ls.RenewLeases(ctx, "replica-a", nil, ttl); err != nil || len(lost) != 0 {
		t.Errorf("RenewLeases of nothing = %v, %v", lost, err)
	}
	_, err = ls.RenewLeases(ctx, "replica-a", held, 0)
	wantErr(t, "RenewLeases with no ttl", err, tenant.ErrInvalid)
}

func testAttempts(t *testing.T, s tenant.Store) {
	cur := mustCreate(t, s, newTenant("acme"))
	retryAt := time.Now().Add(time.Minute)
	failing, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{
		Generation: 1, Status: tenant.StatusProvisioning, Message: "attempt 2 failed", Attempts: 2, RetryAt: &retryAt,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, cur.ID)
	sameTenant(t, "Get after a failed attempt", got, failing)
	if got.Attempts != 2 || got.RetryAt == nil || !got.RetryAt.Equal(tenant.Timestamp(retryAt)) {
		t.Errorf("attempts %d, retry at %v; want 2, %v", got.Attempts, got.RetryAt, retryAt)
	}
	if !got.StatusChangedAt.After(cur.StatusChangedAt) && !got.StatusChangedAt.Equal(cur.StatusChangedAt) {
		t.Errorf("StatusChangedAt moved back: %v → %v", cur.StatusChangedAt, got.StatusChangedAt)
	}
	// A new desired state starts the count again.
	next, err := s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: []byte(`{"image":"b"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if next.Attempts != 0 || next.RetryAt != nil {
		t.Errorf("after a new desired state: attempts %d, retry at %v", next.Attempts, next.RetryAt)
	}
	// So does a successful observation.
	if _, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 2, Status: tenant.StatusProvisioning, Attempts: 1, RetryAt: &retryAt}); err != nil {
		t.Fatal(err)
	}
	ready, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 2, Status: tenant.StatusReady, Settles: true})
	if err != nil || ready.Attempts != 0 || ready.RetryAt != nil || ready.ObservedGeneration != 2 {
		t.Errorf("ready: %+v, %v", ready, err)
	}
	same, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 2, Status: tenant.StatusReady, Message: "paused"})
	if err != nil || !same.StatusChangedAt.Equal(ready.StatusChangedAt) {
		t.Errorf("staying ready moved StatusChangedAt: %v → %v (%v)", ready.StatusChangedAt, same.StatusChangedAt, err)
	}
	// A deletion that failed is retried by asking again.
	del, err := s.RequestDeletion(ctx, cur.ID, 0, "test")
	if err != nil {
		t.Fatal(err)
	}
	failed, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: del.Generation, Status: tenant.StatusFailed, Settles: true, Message: "destroy failed", Attempts: 10})
	if err != nil {
		t.Fatal(err)
	}
	retry, err := s.RequestDeletion(ctx, cur.ID, 0, "test")
	if err != nil || retry.Status != tenant.StatusDeleting || retry.Generation != failed.Generation+1 || retry.Attempts != 0 {
		t.Errorf("asking again to delete after a failed deletion = %+v, %v; want deleting at a new generation", retry, err)
	}
	if !retry.DeletionRequestedAt.Equal(*del.DeletionRequestedAt) {
		t.Errorf("a retried deletion moved DeletionRequestedAt: %v → %v", del.DeletionRequestedAt, retry.DeletionRequestedAt)
	}
}

// testWatchOverflow: a watcher that falls behind hears that it missed
// announcements.
func testWatchOverflow(t *testing.T, s tenant.Store) {
	w, ok := s.(tenant.Watcher)
	if !ok {
		t.Fatalf("%T does not implement tenant.Watcher", s)
	}
	wctx, cancel := contextWithCancel()
	defer cancel()
	ch, err := w.Watch(wctx)
	if err != nil {
		t.Fatal(err)
	}
	// Nobody reads while far more tenants are created than any buffer
	// should hold: 5,000 desired-state changes on a few tenants.
	cur := mustCreate(t, s, newTenant("busy"))
	for i := range 5000 {
		next, err := s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: []byte(fmt.Sprintf(`{"image":"a:%d"}`, i))})
		if err != nil {
			t.Fatal(err)
		}
		cur = next
	}
	sawLoss := false
	timeout := time.After(30 * time.Second)
	for !sawLoss {
		select {
		case id := <-ch:
			sawLoss = id == ""
		case <-timeout:
			t.Fatal("a watcher that fell 5,000 announcements behind never heard that it missed some")
		}
	}
}

func testWatch(t *testing.T, s tenant.Store) {
	w, ok := s.(tenant.Watcher)
	if !ok {
		t.Fatalf("%T does not implement tenant.Watcher: the controller would wait for its sweep", s)
	}
	wctx, cancel := contextWithCancel()
	defer cancel()
	ch, err := w.Watch(wctx)
	if err != nil {
		t.Fatal(err)
	}
	expect := func(what, id string) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case got := <-ch:
				if got == id {
					return
				}
			case <-timeout:
				t.Fatalf("no announcement of %s for tenant %s", what, id)
			}
		}
	}
	cur := mustCreate(t, s, newTenant("acme"))
	expect("Create", cur.ID)
	next, err := s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: []byte(`{"image":"b"}`)})
	if err != nil {
		t.Fatal(err)
	}
	expect("UpdateDesired", cur.ID)
	if _, err := s.RequestDeletion(ctx, next.ID, 0, "test"); err != nil {
		t.Fatal(err)
	}
	expect("RequestDeletion", cur.ID)
	cancel()
	select {
	case _, open := <-ch:
		for open {
			_, open = <-ch
		}
	case <-time.After(10 * time.Second):
		t.Error("the watch channel was not closed when its context ended")
	}
}
