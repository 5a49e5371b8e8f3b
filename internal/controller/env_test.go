package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/store/postgres"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var ctx = context.Background()

// fast are controller options that make tests quick: short backoff and
// polling, no periodic scans unless a test asks.
func fast() controller.Options {
	return controller.Options{
		Workers:         16,
		BaseBackoff:     time.Millisecond,
		MaxBackoff:      20 * time.Millisecond,
		PollInterval:    10 * time.Millisecond,
		Resync:          time.Hour,
		Sweep:           time.Hour,
		ShutdownTimeout: 10 * time.Second,
	}
}

func openSQLite(t testing.TB) tenant.Store {
	t.Helper()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "landlord.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openPostgres(t testing.TB) tenant.Store {
	t.Helper()
	s, err := postgres.Open(ctx, pgtest.NewDatabase(t), postgres.Options{MaxConns: 32})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// env is a store, a mock provider and the manager over it.
type env struct {
	store    tenant.Store
	platform *mock.Platform
	mock     *mock.Provider
	manager  *compute.Manager
}

func newEnv(t testing.TB, store tenant.Store, block string) *env {
	t.Helper()
	e := &env{store: store, platform: mock.NewPlatform()}
	e.restartProvider(t, block)
	return e
}

// restartProvider replaces the provider and manager with new ones over the
// same platform, as a restarted process would have.
func (e *env) restartProvider(t testing.TB, block string) {
	t.Helper()
	p, err := mock.New(mock.Options{Block: json.RawMessage(block), Platform: e.platform})
	if err != nil {
		t.Fatal(err)
	}
	e.mock, e.manager = p, computetest.Manager(t, p, compute.ManagerOptions{})
}

// run starts a controller and returns a function that stops it and waits.
func (e *env) run(t testing.TB, opts controller.Options) (stop func()) {
	t.Helper()
	c := controller.New(e.store, e.manager, opts)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := c.Run(runCtx); err != nil {
			t.Errorf("controller: %v", err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func (e *env) create(t testing.TB, name, config string, annotations map[string]string) *tenant.Tenant {
	t.Helper()
	out, err := e.store.Create(ctx, &tenant.Tenant{Name: name, Provider: mock.Name, ComputeConfig: json.RawMessage(config), Annotations: annotations}, "test")
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return out
}

// createMany creates n tenants from 16 goroutines, as concurrent API calls
// would.
func (e *env) createMany(t testing.TB, prefix string, n int, config string) []string {
	t.Helper()
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				out, err := e.store.Create(ctx, &tenant.Tenant{Name: fmt.Sprintf("%s-%05d", prefix, i), Provider: mock.Name, ComputeConfig: json.RawMessage(config)}, "test")
				if err != nil {
					errs <- err
					return
				}
				ids[i] = out.ID
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return ids
}

func (e *env) get(t testing.TB, id string) *tenant.Tenant {
	t.Helper()
	out, err := e.store.Get(ctx, id, tenant.GetOptions{IncludeDeleted: true})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitStatus waits until every tenant has the status, and fails with the
// first one that has not when timeout passes.
func (e *env) waitStatus(t testing.TB, timeout time.Duration, want tenant.Status, ids ...string) {
	t.Helper()
	pending := ids
	poll.Until(t, fmt.Sprintf("%d tenants %s", len(ids), want), timeout, func() (bool, string) {
		var still []string
		for _, id := range pending {
			if e.get(t, id).Status != want {
				still = append(still, id)
			}
		}
		pending = still
		if len(pending) == 0 {
			return true, ""
		}
		got := e.get(t, pending[0])
		return false, fmt.Sprintf("%d of %d are not; e.g. %s is %s: %q (attempts %d)", len(pending), len(ids), got.Name, got.Status, got.StatusMessage, got.Attempts)
	})
}

func (e *env) events(t testing.TB, id string, typ tenant.EventType) []tenant.Event {
	t.Helper()
	var out []tenant.Event
	opts := tenant.EventListOptions{PageSize: tenant.MaxPageSize}
	for {
		page, err := e.store.ListEvents(ctx, id, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range page.Events {
			if typ == "" || ev.Type == typ {
				out = append(out, ev)
			}
		}
		if page.NextPageToken == "" {
			return out
		}
		opts.PageToken = page.NextPageToken
	}
}

const appConfig = `{"image":"example.com/app:1","ports":[{"container_port":8080}]}`

// waitSettled waits until the controller has made the tenant ready at the
// generation of want.
func (e *env) waitSettled(t testing.TB, want *tenant.Tenant) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("%s settled at generation %d", want.Name, want.Generation), 30*time.Second, func() (bool, string) {
		got := e.get(t, want.ID)
		return got.ObservedGeneration >= want.Generation && got.Status == tenant.StatusReady, fmt.Sprintf("%s, observed %d", got.Status, got.ObservedGeneration)
	})
}

// lead runs a controller as a member among replicas, holding every
// partition, as landlord serve does: every write is fenced.
func (e *env) lead(t testing.TB, opts controller.Options) {
	t.Helper()
	opts.Leases = e.store.(tenant.LeaseStore)
	opts.Identity = "bench"
	e.run(t, opts)
}
