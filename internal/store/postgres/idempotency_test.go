package postgres

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// An expired response is not returned, is replaced by the next reservation
// of its key, and is deleted by reservations of other keys.
func TestIdempotentExpiry(t *testing.T) {
	clock := time.Date(2030, 1, 2, 3, 4, 5, 678_901_234, time.UTC)
	s, _ := mustOpen(t, Options{Now: func() time.Time { return clock }})
	now := tenant.Timestamp(clock)
	insert := func(key string, createdAt time.Time) {
		t.Helper()
		if _, err := s.pool.Exec(ctx, `INSERT INTO idempotency_keys (actor, key, request_hash, status, header, body, created_at)
			VALUES ('alice', $1, 'old', 200, '{"A":"b"}', 'old body', $2)`, key, createdAt); err != nil {
			t.Fatal(err)
		}
	}
	insert("expired", now.Add(-tenant.IdempotencyTTL-time.Microsecond))
	insert("other-expired", now.Add(-2*tenant.IdempotencyTTL))
	insert("just-in-time", now.Add(-tenant.IdempotencyTTL))

	if _, err := s.GetIdempotent(ctx, "alice", "expired"); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("GetIdempotent of an expired response = %v, want ErrNotFound", err)
	}
	if got, err := s.GetIdempotent(ctx, "alice", "just-in-time"); err != nil || got.RequestHash != "old" {
		t.Errorf("GetIdempotent of a response exactly TTL old = %+v, %v; want it", got, err)
	}

	res, fresh, err := s.ReserveIdempotent(ctx, "alice", "expired", "new", tenant.IdempotencyLease)
	if err != nil || !fresh {
		t.Fatalf("ReserveIdempotent over an expired response = %v, %v; want the key", fresh, err)
	}
	want := tenant.IdempotentResponse{Actor: "alice", Key: "expired", RequestHash: "new", Token: res.Token, CreatedAt: now}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("ReserveIdempotent (-want +got):\n%s", diff)
	}
	got, err := s.GetIdempotent(ctx, "alice", "expired")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetIdempotent after the replacement (-want +got):\n%s", diff)
	}

	// The reservation swept the other expired row, and only that one.
	rows, err := s.pool.Query(ctx, `SELECT key FROM idempotency_keys ORDER BY key`)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"expired", "just-in-time"}, keys); diff != "" {
		t.Errorf("keys left (-want +got):\n%s", diff)
	}

	// A response that has not expired stays.
	kept, fresh, err := s.ReserveIdempotent(ctx, "alice", "just-in-time", "newer", 0)
	if err != nil || fresh || kept.RequestHash != "old" || kept.Status != 200 || kept.Header["A"] != "b" || string(kept.Body) != "old body" {
		t.Errorf("ReserveIdempotent over a live response = %+v, %v, %v; want the old one", kept, fresh, err)
	}
}

// An idempotent create is one round trip, as Create is: the response, the
// tenant, its event and its announcement go in one batch. One whose
// reservation was lost keeps nothing and announces nothing: the next
// announcement is that of the next create.
func TestCreateIdempotentOneRoundTrip(t *testing.T) {
	trips := &roundTrips{}
	s, _ := mustOpen(t, Options{Tracer: trips, MaxConns: 1})
	ch := mustWatch(t, s)
	respond := func(c *tenant.Tenant) (tenant.IdempotentResponse, error) {
		return tenant.IdempotentResponse{Status: 201, Header: map[string]string{"Location": "/v1/tenants/" + c.ID}, Body: []byte(c.ID)}, nil
	}
	create := func(id, name string, res tenant.IdempotentResponse) (*tenant.Tenant, int64, error) {
		t.Helper()
		before := trips.n.Load()
		out, err := s.CreateIdempotent(ctx, &tenant.Tenant{ID: id, Name: name, Provider: "mock", ComputeConfig: []byte(`{"image":"app:1"}`)}, "alice", res, respond)
		return out, trips.n.Load() - before, err
	}
	reserve := func(key string) tenant.IdempotentResponse {
		t.Helper()
		res, fresh, err := s.ReserveIdempotent(ctx, "alice", key, "h", tenant.IdempotencyLease)
		if err != nil || !fresh {
			t.Fatalf("ReserveIdempotent(%s) = %v, %v", key, fresh, err)
		}
		return res
	}
	// The first create prepares the statements on the only connection.
	warm, _, err := create("", "warm", reserve("warm"))
	if err != nil {
		t.Fatal(err)
	}
	if got := nextAnnouncement(t, ch); got != warm.ID {
		t.Fatalf("announced %s, want %s", got, warm.ID)
	}

	// Lost reservations, one of them for a tenant whose id (the caller's
	// choice) another tenant has: neither writes an event to that tenant.
	for _, id := range []string{"", warm.ID} {
		lost := reserve("lost" + id)
		if err := s.ReleaseIdempotent(ctx, lost); err != nil {
			t.Fatal(err)
		}
		if _, n, err := create(id, "lost", lost); !errors.Is(err, tenant.ErrReservationLost) || n != 1 {
			t.Fatalf("CreateIdempotent of a released reservation (id %q) = %v in %d round trips, want ErrReservationLost in 1", id, err, n)
		}
	}
	if _, err := s.Get(ctx, "lost", tenant.GetOptions{IncludeDeleted: true}); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("the tenant of a lost reservation was stored: %v", err)
	}
	var events int
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM events").Scan(&events); err != nil || events != 1 {
		t.Errorf("%d events (%v), want the one of the first create", events, err)
	}

	created, n, err := create("", "kept", reserve("kept"))
	if err != nil || n != 1 {
		t.Fatalf("CreateIdempotent = %v in %d round trips, want 1", err, n)
	}
	if got := nextAnnouncement(t, ch); got != created.ID {
		t.Fatalf("announced %s, want %s, the create after the lost one", got, created.ID)
	}
	kept, err := s.GetIdempotent(ctx, "alice", "kept")
	if err != nil || kept.Status != 201 || string(kept.Body) != created.ID {
		t.Errorf("kept %+v, %v; want the response for %s", kept, err, created.ID)
	}
}
