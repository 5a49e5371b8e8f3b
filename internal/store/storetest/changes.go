package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// announcements reads a watch or change feed's channel for the tenants of
// one test: "" (a loss) and the ids of other tenants are skipped.
type announcements struct {
	t    *testing.T
	name string
	ch   <-chan string
	mine map[string]bool
}

// next is the next announcement of one of the test's tenants.
func (a *announcements) next(after string) string {
	a.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case id, open := <-a.ch:
			if !open {
				a.t.Fatalf("%s: the channel was closed, waiting for the announcement of %s", a.name, after)
			}
			if a.mine[id] {
				return id
			}
		case <-timeout:
			a.t.Fatalf("%s: no announcement of %s within 10s", a.name, after)
		}
	}
}

// expect checks that the next announcement of the test's tenants is of id:
// what was done to it was announced, and nothing in between was.
func (a *announcements) expect(what, id string) {
	a.t.Helper()
	if got := a.next(what); got != id {
		a.t.Fatalf("%s: after %s, announced %s; want %s", a.name, what, got, id)
	}
}

// testChangeFeed: a change feed announces desired-state changes and the
// controller's writes that record an event, and not those that record
// none; Watch still announces desired-state changes alone.
func testChangeFeed(t *testing.T, s tenant.Store) {
	f, ok := s.(tenant.ChangeFeed)
	if !ok {
		t.Fatalf("%T does not implement tenant.ChangeFeed: a console could not show changes live", s)
	}
	w, ok := s.(tenant.Watcher)
	if !ok {
		t.Fatalf("%T does not implement tenant.Watcher", s)
	}
	fctx, cancel := contextWithCancel()
	defer cancel()
	changesCh, err := f.Changes(fctx)
	if err != nil {
		t.Fatalf("Changes: %v", err)
	}
	watchCh, err := w.Watch(fctx)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	mine := map[string]bool{}
	changes := &announcements{t: t, name: "Changes", ch: changesCh, mine: mine}
	watch := &announcements{t: t, name: "Watch", ch: watchCh, mine: mine}

	cur := mustCreate(t, s, newTenant("acme"))
	mine[cur.ID] = true
	changes.expect("Create", cur.ID)
	watch.expect("Create", cur.ID)

	cur, err = s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: []byte(`{"image":"b"}`), Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	changes.expect("UpdateDesired", cur.ID)
	watch.expect("UpdateDesired", cur.ID)

	cur = mustObserve(t, s, cur, tenant.StatusProvisioning)
	changes.expect("UpdateObserved from requested to provisioning", cur.ID)

	// A progress message alone records no event: it is not announced, so
	// the next announcement is the marker's create.
	if _, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: cur.Generation, Status: cur.Status, Message: "pulling the image", Actor: "controller"}); err != nil {
		t.Fatal(err)
	}
	marker := mustCreate(t, s, newTenant("marker"))
	mine[marker.ID] = true
	changes.expect("UpdateObserved with a progress message alone, then the marker's Create", marker.ID)

	if err := s.AppendEvent(ctx, tenant.Event{TenantID: cur.ID, Type: tenant.EventNote, Generation: cur.Generation, Message: "a note", Actor: "controller"}); err != nil {
		t.Fatal(err)
	}
	changes.expect("AppendEvent of a note", cur.ID)

	// Watch heard neither the observations nor the note: the controller is
	// not woken by its own writes.
	watch.expect("UpdateObserved and AppendEvent, then the marker's Create", marker.ID)

	// Observations made at once (which a store may commit together) are
	// each announced.
	many := make([]*tenant.Tenant, 8)
	for i := range many {
		many[i] = mustCreate(t, s, newTenant(fmt.Sprintf("many-%d", i)))
		mine[many[i].ID] = true
		changes.expect("Create", many[i].ID)
	}
	var wg sync.WaitGroup
	for _, m := range many {
		wg.Go(func() {
			if _, err := s.UpdateObserved(ctx, m.ID, tenant.Observation{Generation: m.Generation, Status: tenant.StatusProvisioning, Actor: "controller"}); err != nil {
				t.Errorf("UpdateObserved(%s): %v", m.Name, err)
			}
		})
	}
	wg.Wait()
	heard := map[string]bool{}
	for range many {
		heard[changes.next("UpdateObserved of many tenants at once")] = true
	}
	for _, m := range many {
		if !heard[m.ID] {
			t.Errorf("Changes: UpdateObserved of %s, one of %d at once, was not announced (heard %v)", m.Name, len(many), heard)
		}
	}

	cancel()
	for _, a := range []*announcements{changes, watch} {
		timeout := time.After(10 * time.Second)
		for open := true; open; {
			select {
			case _, open = <-a.ch:
			case <-timeout:
				t.Fatalf("%s: the channel was not closed when its context ended", a.name)
			}
		}
	}
}
