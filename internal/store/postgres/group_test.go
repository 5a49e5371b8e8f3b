package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// pending is a call of UpdateObserved as a committer receives it.
func pending(ctx context.Context, id string, obs tenant.Observation) *pendingObservation {
	return &pendingObservation{ctx: ctx, id: id, obs: obs, done: make(chan observed, 1)}
}

// A group is one transaction of two round trips for the tenants it writes,
// and every call in it gets its own answer: a wrong epoch, a stale
// generation or an unknown tenant fails that call alone; a second call for
// a tenant of the group is handed back to its caller, which writes it after
// the group, on its own; a call whose context has ended is not written.
func TestGroupCommit(t *testing.T) {
	trips := &roundTrips{}
	s, _ := mustOpen(t, Options{Tracer: trips, MaxConns: 2})
	created := make([]*tenant.Tenant, 6)
	for i := range created {
		created[i] = mustCreate(t, s, fmt.Sprint("group-", i))
	}
	fence := holdPartitions(t, s, "test")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	provisioning := func(epoch int64) tenant.Observation {
		return tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Message: "grouped", Actor: "test", Epoch: epoch}
	}
	stale := provisioning(0)
	stale.Generation = 2
	again := provisioning(fence(created[0].ID))
	again.Message = "again"
	unknown := "01234567-89ab-7def-8123-456789abcdef"
	calls := []struct {
		name string
		p    *pendingObservation
		want error // nil: written
	}{
		{"fenced", pending(ctx, created[0].ID, provisioning(fence(created[0].ID))), nil},
		{"unfenced", pending(ctx, created[1].ID, provisioning(0)), nil},
		{"another", pending(ctx, created[2].ID, provisioning(fence(created[2].ID))), nil},
		{"wrong epoch", pending(ctx, created[3].ID, provisioning(fence(created[3].ID)+1)), tenant.ErrFenced},
		{"stale generation", pending(ctx, created[4].ID, stale), tenant.ErrConflict},
		{"unknown tenant", pending(ctx, unknown, provisioning(0)), tenant.ErrNotFound},
		{"ended context", pending(cancelled, created[5].ID, provisioning(0)), context.Canceled},
		{"second call for a tenant", pending(ctx, created[0].ID, again), nil},
	}
	group := make([]*pendingObservation, len(calls))
	for i, c := range calls {
		group[i] = c.p
	}
	// Warm both connections up, so that no statement is prepared while
	// counting.
	s.commitGroup([]*pendingObservation{pending(ctx, unknown, provisioning(1)), pending(ctx, unknown[:35]+"0", provisioning(0))})
	if _, err := s.Get(ctx, created[0].ID, tenant.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	before := trips.n.Load()
	s.commitGroup(group)
	// The group alone: the committer does not write the second call for
	// created[0].
	if got := trips.n.Load() - before; got != 2 {
		t.Errorf("%d round trips, want 2 for the group", got)
	}
	for _, c := range calls {
		r := <-c.p.done
		if wantAlone := c.p == calls[len(calls)-1].p; r.alone != wantAlone {
			t.Errorf("%s: handed back to its caller %v, want %v", c.name, r.alone, wantAlone)
		}
		got, err := s.answer(c.p, r)
		switch {
		case c.want == nil && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != nil && !errors.Is(err, c.want):
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		case c.want == nil && got.StatusMessage != c.p.obs.Message:
			t.Errorf("%s: answered %+v", c.name, got)
		}
	}
	for i, want := range []string{"again", "grouped", "grouped", "", "", ""} {
		got := mustGetID(t, s, created[i].ID)
		if got.StatusMessage != want {
			t.Errorf("tenant %d: message %q, want %q", i, got.StatusMessage, want)
		}
	}
}

// A write that PostgreSQL refuses fails its own call: the group's
// transaction rolls back and its calls are handed back to their callers,
// which write them one by one.
func TestGroupCommitRefusedWrite(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	a, b, c := mustCreate(t, s, "a"), mustCreate(t, s, "b"), mustCreate(t, s, "c")
	if _, err := s.pool.Exec(ctx, `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'refused'; END $$;
		CREATE TRIGGER refuse BEFORE UPDATE ON tenants FOR EACH ROW WHEN (NEW.status_message = 'refuse') EXECUTE FUNCTION refuse()`); err != nil {
		t.Fatal(err)
	}
	obs := func(msg string) tenant.Observation {
		return tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Message: msg, Actor: "test"}
	}
	group := []*pendingObservation{pending(ctx, a.ID, obs("kept")), pending(ctx, b.ID, obs("refuse")), pending(ctx, c.ID, obs("kept"))}
	s.commitGroup(group)
	for i, p := range group {
		r := <-p.done
		if !r.alone {
			t.Errorf("call %d of a failed group was not handed back: %+v", i, r)
		}
		if _, err := s.answer(p, r); (i == 1) != (err != nil) {
			t.Errorf("call %d: %v", i, err)
		}
	}
	for _, id := range []string{a.ID, c.ID} {
		if got := mustGetID(t, s, id); got.StatusMessage != "kept" {
			t.Errorf("tenant %s: message %q, want kept", id, got.StatusMessage)
		}
	}
	if got := mustGetID(t, s, b.ID); got.Status != tenant.StatusRequested {
		t.Errorf("the refused write was kept: %+v", got)
	}
}

// Calls made at once from many goroutines each get their own answer and
// their own write, grouped or not.
func TestGroupCommitConcurrent(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	const n = 64
	ids := make([]string, n)
	for i := range ids {
		ids[i] = mustCreate(t, s, fmt.Sprint("concurrent-", i)).ID
	}
	fence := holdPartitions(t, s, "test")
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, id := range ids {
		wg.Go(func() {
			epoch := fence(id)
			if i%8 == 7 {
				epoch++ // not the lease's: refused
			}
			_, errs[i] = s.UpdateObserved(ctx, id, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Message: "at once", Actor: "test", Epoch: epoch})
		})
	}
	wg.Wait()
	for i, id := range ids {
		got := mustGetID(t, s, id)
		if i%8 == 7 {
			if !errors.Is(errs[i], tenant.ErrFenced) || got.Status != tenant.StatusRequested {
				t.Errorf("call %d with a stale epoch: %v, status %s", i, errs[i], got.Status)
			}
			continue
		}
		if errs[i] != nil || got.Status != tenant.StatusProvisioning || got.StatusMessage != "at once" {
			t.Errorf("call %d: %v, status %s %q", i, errs[i], got.Status, got.StatusMessage)
		}
		page, err := s.ListEvents(ctx, id, tenant.EventListOptions{})
		if err != nil || len(page.Events) != 2 {
			t.Errorf("tenant %d: events %v, %v; want created and the status change", i, page, err)
		}
	}
}

func mustGetID(t *testing.T, s *Store, id string) *tenant.Tenant {
	t.Helper()
	got, err := s.Get(ctx, id, tenant.GetOptions{IncludeDeleted: true})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Close while observations are in flight: every call returns, each
// goroutine's tenant holds its last call that returned no error (a call
// the committers took is answered once written, one they did not take is
// refused), and Close waits for the groups in flight.
func TestGroupCommitClose(t *testing.T) {
	s, url := mustOpen(t, Options{})
	const n = 32
	ids := make([]string, n)
	for i := range ids {
		ids[i] = mustCreate(t, s, fmt.Sprint("closing-", i)).ID
	}
	var (
		wg        sync.WaitGroup
		succeeded atomic.Int64
		enough    = make(chan struct{})
		once      sync.Once
		last      = make([]string, n)
	)
	for i, id := range ids {
		wg.Go(func() {
			status := tenant.StatusProvisioning
			for k := 0; ; k++ {
				msg := fmt.Sprint("observation ", k)
				if _, err := s.UpdateObserved(ctx, id, tenant.Observation{Generation: 1, Status: status, Message: msg, Actor: "test"}); err != nil {
					return
				}
				last[i] = msg
				if succeeded.Add(1) == 20*n {
					once.Do(func() { close(enough) })
				}
			}
		})
	}
	<-enough
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	again, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for i, id := range ids {
		if got := mustGetID(t, again, id); got.StatusMessage != last[i] {
			t.Errorf("tenant %d holds %q; its last call that returned no error wrote %q", i, got.StatusMessage, last[i])
		}
	}
}

// panicSealer passes configs through, except that opening tenant
// panicking's (once set) panics.
type panicSealer struct{ panicking atomic.Pointer[string] }

func (s *panicSealer) Seal(_, _ string, config json.RawMessage) (json.RawMessage, error) {
	return config, nil
}

func (s *panicSealer) Open(id string, stored json.RawMessage) (json.RawMessage, error) {
	if p := s.panicking.Load(); p != nil && *p == id {
		panic("open " + id)
	}
	return stored, nil
}

// A panic while a committer handles one call (the sealer opening its row,
// the clock its rule asks) fails that call alone, with the panic in its
// error: the committer goes on, nothing of that call is written, and the
// other calls of the group are written and answered.
func TestGroupCommitPanic(t *testing.T) {
	for _, name := range []string{"sealer", "clock"} {
		t.Run(name, func(t *testing.T) {
			sealer := &panicSealer{}
			var (
				ticking atomic.Bool
				ticks   atomic.Int64
			)
			now := func() time.Time {
				// The second member in id order asks second.
				if ticking.Load() && ticks.Add(1) == 2 {
					panic("clock")
				}
				return time.Now()
			}
			s, _ := mustOpen(t, Options{Sealer: sealer, Now: now})
			created := []*tenant.Tenant{mustCreate(t, s, "a"), mustCreate(t, s, "b"), mustCreate(t, s, "c")}
			slices.SortFunc(created, func(a, b *tenant.Tenant) int { return strings.Compare(a.ID, b.ID) })
			bad := created[1].ID
			if name == "sealer" {
				sealer.panicking.Store(&bad)
			} else {
				ticking.Store(true)
			}
			obs := tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Message: "grouped", Actor: "test"}
			group := make([]*pendingObservation, len(created))
			for i, c := range created {
				group[i] = pending(ctx, c.ID, obs)
			}
			s.commitGroup(group)
			sealer.panicking.Store(nil)
			ticking.Store(false)
			for i, p := range group {
				got := <-p.done
				switch {
				case p.id == bad:
					var pan panicked
					if !errors.As(got.err, &pan) || got.t != nil {
						t.Errorf("the call that panicked: %+v, %v; want its panic", got.t, got.err)
					}
				case got.err != nil || got.t == nil || got.t.StatusMessage != "grouped":
					t.Errorf("call %d: %+v, %v", i, got.t, got.err)
				}
			}
			for _, c := range created {
				got := mustGetID(t, s, c.ID)
				if want := c.ID != bad; (got.StatusMessage == "grouped") != want {
					t.Errorf("tenant %s: message %q, want written %v", c.ID, got.StatusMessage, want)
				}
			}
		})
	}
}
