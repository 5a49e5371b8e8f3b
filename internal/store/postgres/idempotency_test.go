package postgres

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Concurrent saves of one key, from as many connections: exactly one keeps
// its response, and every one gets that response back.
func TestSaveIdempotentConcurrent(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	const n = 10
	var wg sync.WaitGroup
	saved := make([]tenant.IdempotentResponse, n)
	fresh := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			saved[i], fresh[i], errs[i] = s.SaveIdempotent(ctx, tenant.IdempotentResponse{
				Actor: "alice", Key: "race", RequestHash: fmt.Sprintf("h%d", i), Status: 201,
				Header: map[string]string{"X-Saver": fmt.Sprint(i)},
				Body:   fmt.Appendf(nil, `{"saver":%d}`, i),
			})
		})
	}
	wg.Wait()
	winner := -1
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("SaveIdempotent %d: %v", i, errs[i])
		}
		if fresh[i] {
			if winner >= 0 {
				t.Fatalf("saves %d and %d both kept their response", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no save kept its response")
	}
	if want := fmt.Sprintf("h%d", winner); saved[winner].RequestHash != want {
		t.Errorf("the winner got %q back, want its own %q", saved[winner].RequestHash, want)
	}
	for i := range n {
		if diff := cmp.Diff(saved[winner], saved[i]); diff != "" {
			t.Errorf("save %d got another response (-winner +got):\n%s", i, diff)
		}
	}
	got, err := s.GetIdempotent(ctx, "alice", "race")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(saved[winner], got); diff != "" {
		t.Errorf("GetIdempotent (-winner +got):\n%s", diff)
	}
}

// An expired response is not returned, is replaced by the next save of its
// key, and is deleted by saves of other keys.
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

	saved, fresh, err := s.SaveIdempotent(ctx, tenant.IdempotentResponse{Actor: "alice", Key: "expired", RequestHash: "new", Status: 204})
	if err != nil || !fresh {
		t.Fatalf("SaveIdempotent over an expired response = %v, %v; want it kept", fresh, err)
	}
	want := tenant.IdempotentResponse{Actor: "alice", Key: "expired", RequestHash: "new", Status: 204, CreatedAt: now}
	if diff := cmp.Diff(want, saved); diff != "" {
		t.Errorf("SaveIdempotent (-want +got):\n%s", diff)
	}
	got, err := s.GetIdempotent(ctx, "alice", "expired")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetIdempotent after the replacement (-want +got):\n%s", diff)
	}

	// The save swept the other expired row, and only that one.
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
	kept, fresh, err := s.SaveIdempotent(ctx, tenant.IdempotentResponse{Actor: "alice", Key: "just-in-time", RequestHash: "newer", Status: 200})
	if err != nil || fresh || kept.RequestHash != "old" || kept.Header["A"] != "b" || string(kept.Body) != "old body" {
		t.Errorf("SaveIdempotent over a live response = %+v, %v, %v; want the old one", kept, fresh, err)
	}
}
