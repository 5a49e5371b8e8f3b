package postgres

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// roundTrips counts what a store sends to PostgreSQL: each statement sent
// on its own (Query, QueryRow, Exec: a pgx.Tx's BEGIN, COMMIT and ROLLBACK
// among them), each batch, each prepare and each COPY is one round trip.
// pgx's own preparing of a statement new to a connection is not seen: warm
// the connection up before counting.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (r *roundTrips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}
func (r *roundTrips) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

// Each write of a tenant's lifecycle takes the round trips issue 19
// counted down to: a create 1 (one batch, an implicit transaction), every
// change to an existing tenant 2 (BEGIN with the fence and the row lock,
// the writes with COMMIT), a change that writes nothing 2 (the rollback).
func TestRoundTrips(t *testing.T) {
	trips := &roundTrips{}
	// One connection, so that the first lifecycle prepares every statement
	// on the connection the second one is counted on.
	s, _ := mustOpen(t, Options{Tracer: trips, MaxConns: 1})
	fence := holdPartitions(t, s, "test")
	type step struct {
		name string
		want int64
		do   func(cur *tenant.Tenant) (*tenant.Tenant, error)
	}
	steps := []step{
		{"create", 1, nil}, // filled in per lifecycle
		{"fenced observation", 2, func(cur *tenant.Tenant) (*tenant.Tenant, error) {
			return s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Actor: "test", Epoch: fence(cur.ID)})
		}},
		{"observation without a fence", 2, func(cur *tenant.Tenant) (*tenant.Tenant, error) {
			return s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 1, Status: tenant.StatusReady, Settles: true, Actor: "test"})
		}},
		{"desired update", 2, func(cur *tenant.Tenant) (*tenant.Tenant, error) {
			return s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: []byte(`{"image":"app:2"}`), Actor: "test"})
		}},
		{"desired update that changes nothing", 2, func(cur *tenant.Tenant) (*tenant.Tenant, error) {
			return s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: []byte(`{"image":"app:2"}`), Actor: "test"})
		}},
		{"deletion request", 2, func(cur *tenant.Tenant) (*tenant.Tenant, error) {
			return s.RequestDeletion(ctx, cur.ID, cur.Version, "test")
		}},
		{"fenced observation of the deletion", 2, func(cur *tenant.Tenant) (*tenant.Tenant, error) {
			return s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: cur.Generation, Status: tenant.StatusDeleted, Settles: true, Actor: "test", Epoch: fence(cur.ID)})
		}},
	}
	for round, name := range []string{"warm", "counted"} {
		var cur *tenant.Tenant
		steps[0].do = func(*tenant.Tenant) (*tenant.Tenant, error) {
			return s.Create(ctx, &tenant.Tenant{Name: name, Provider: "mock", ComputeConfig: []byte(`{"image":"app:1"}`)}, "test")
		}
		for _, st := range steps {
			before := trips.n.Load()
			var err error
			if cur, err = st.do(cur); err != nil {
				t.Fatalf("%s (%s lifecycle): %v", st.name, name, err)
			}
			if got := trips.n.Load() - before; round == 1 && got != st.want {
				t.Errorf("%s: %d round trips, want %d", st.name, got, st.want)
			}
		}
	}
}

// A context that ends between the two pipelines of a change (after the row
// lock, before the write) leaves nothing written, and the connection goes
// back to the pool out of its transaction: the next write, on the pool's
// only connection, takes the row lock and the fence's lock again at once.
func TestChangeCancelledBetweenPipelines(t *testing.T) {
	for _, fenced := range []bool{false, true} {
		name := map[bool]string{false: "unfenced", true: "fenced"}[fenced]
		t.Run(name, func(t *testing.T) {
			s, url := mustOpen(t, Options{MaxConns: 1})
			created := mustCreate(t, s, "cancelled")
			var epoch int64
			if fenced {
				lease, err := s.AcquireLease(ctx, tenant.FenceLease(created.ID), "test", time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				epoch = lease.Epoch
			}
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			_, err := s.change(cctx, "test change", created.ID, true, epoch, func(cur *tenant.Tenant, now time.Time) (*tenant.Tenant, []tenant.Event, error) {
				cancel()
				return tenant.ApplyDesired(cur, tenant.DesiredChange{Version: cur.Version, ComputeConfig: cur.ComputeConfig, Labels: map[string]string{"lost": "yes"}, Actor: "test"}, now)
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("change with a context cancelled between pipelines: %v, want context.Canceled", err)
			}
			got, err := s.Get(ctx, created.ID, tenant.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != created.Version || got.Labels != nil {
				t.Errorf("after the cancelled change: version %d, labels %v; want %d, none", got.Version, got.Labels, created.Version)
			}
			events, err := s.ListEvents(ctx, created.ID, tenant.EventListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(events.Events) != 1 {
				t.Errorf("%d events after the cancelled change, want the create's 1", len(events.Events))
			}
			other, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close(ctx)
			var open int
			if err := other.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`).Scan(&open); err != nil {
				t.Fatal(err)
			}
			if open != 0 {
				t.Errorf("%d sessions idle in a transaction after the cancelled change, want 0", open)
			}
			wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
			defer wcancel()
			if fenced {
				if _, err := s.UpdateObserved(wctx, created.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Actor: "test", Epoch: epoch}); err != nil {
					t.Fatalf("the next observation: %v", err)
				}
				if _, err := s.AcquireLease(wctx, tenant.FenceLease(created.ID), "test", time.Hour); err != nil {
					t.Fatalf("the lease after the cancelled change: %v", err)
				}
			}
			cur, err := s.Get(wctx, created.ID, tenant.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			next, err := s.UpdateDesired(wctx, created.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: cur.ComputeConfig, Labels: map[string]string{"kept": "yes"}, Actor: "test"})
			if err != nil {
				t.Fatalf("the next write: %v", err)
			}
			if next.Labels["kept"] != "yes" {
				t.Errorf("the next write's labels: %v", next.Labels)
			}
		})
	}
}

// A COMMIT that fails fails the write: here a deferred constraint trigger
// refuses the update when the transaction commits, after the update itself
// succeeded in the same pipeline.
func TestChangeCommitFails(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	created := mustCreate(t, s, "refused")
	for _, q := range []string{
		`CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.labels ? 'refuse' THEN RAISE EXCEPTION 'refused at commit' USING ERRCODE = '23514'; END IF;
			RETURN NULL;
		END $$`,
		`CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER UPDATE ON tenants
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit()`,
	} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.UpdateDesired(ctx, created.ID, tenant.DesiredChange{Version: created.Version, ComputeConfig: created.ComputeConfig, Labels: map[string]string{"refuse": "yes"}, Actor: "test"})
	if code, _ := pgCode(err); code != "23514" {
		t.Fatalf("UpdateDesired refused at commit: %v, want the check violation", err)
	}
	got, err := s.Get(ctx, created.ID, tenant.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != created.Version || got.Labels != nil {
		t.Errorf("after the refused commit: version %d, labels %v; want %d, none", got.Version, got.Labels, created.Version)
	}
	if _, err := s.UpdateDesired(ctx, created.ID, tenant.DesiredChange{Version: created.Version, ComputeConfig: created.ComputeConfig, Labels: map[string]string{"kept": "yes"}, Actor: "test"}); err != nil {
		t.Fatalf("the next write: %v", err)
	}
}
