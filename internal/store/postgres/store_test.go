package postgres

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/store/storetest"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) tenant.Store {
		s, _ := mustOpen(t, Options{})
		return s
	})
}

// The store's times come from Options.Now, in UTC, to the microsecond.
func TestClock(t *testing.T) {
	clock := time.Date(2030, 1, 2, 3, 4, 5, 678_901_234, time.FixedZone("X", 5*3600))
	s, _ := mustOpen(t, Options{Now: func() time.Time { return clock }})
	created := mustCreate(t, s, "clocked")
	want := time.Date(2030, 1, 1, 22, 4, 5, 678_901_000, time.UTC)
	got, err := s.Get(ctx, created.ID, tenant.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for what, ts := range map[string]time.Time{"Create's CreatedAt": created.CreatedAt, "CreatedAt": got.CreatedAt, "UpdatedAt": got.UpdatedAt, "StatusChangedAt": got.StatusChangedAt} {
		if ts != want {
			t.Errorf("%s = %v, want %v", what, ts, want)
		}
	}
	retryAt := clock.Add(time.Minute)
	observed, err := s.UpdateObserved(ctx, created.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Attempts: 3, RetryAt: &retryAt})
	if err != nil {
		t.Fatal(err)
	}
	got, err = s.Get(ctx, created.ID, tenant.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRetry := want.Add(time.Minute)
	if got.Attempts != 3 || got.RetryAt == nil || *got.RetryAt != wantRetry || *observed.RetryAt != wantRetry {
		t.Errorf("attempts %d, retry at %v (UpdateObserved said %v); want 3, %v", got.Attempts, got.RetryAt, observed.RetryAt, wantRetry)
	}
	if err := s.AppendEvent(ctx, tenant.Event{TenantID: created.ID, Type: tenant.EventNote}); err != nil {
		t.Fatal(err)
	}
	page, err := s.ListEvents(ctx, created.ID, tenant.EventListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range page.Events {
		if e.Time != want {
			t.Errorf("%s event time = %v, want %v", e.Type, e.Time, want)
		}
	}
}

func TestMaxConns(t *testing.T) {
	url := mustURL(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	tests := []struct {
		name string
		url  string
		opts Options
		want int32
	}{
		{"default", url, Options{}, DefaultMaxConns},
		{"from the url", url + sep + "pool_max_conns=3", Options{}, 3},
		{"option wins", url + sep + "pool_max_conns=3", Options{MaxConns: 5}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(ctx, tt.url, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := s.pool.Config().MaxConns; got != tt.want {
				t.Errorf("MaxConns = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestNameTakenSaysWhich(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	mustCreate(t, s, "taken")
	_, err := s.Create(ctx, &tenant.Tenant{Name: "taken", Provider: "mock", ComputeConfig: []byte(`{}`)}, "test")
	if !errors.Is(err, tenant.ErrNameTaken) || !strings.Contains(err.Error(), `"taken"`) {
		t.Errorf("Create of a taken name = %v, want ErrNameTaken naming it", err)
	}
}

// Every migration must run in a transaction, or a failing one could leave
// half of itself behind.
func TestMigrationsRunInTransactions(t *testing.T) {
	files, err := fs.Glob(migrations, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		b, err := fs.ReadFile(migrations, name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.ToUpper(string(b)), "NO TRANSACTION") {
			t.Errorf("%s opts out of its transaction", name)
		}
	}
}
