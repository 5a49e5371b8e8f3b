package storetest

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

func testIdempotency(t *testing.T, s tenant.Store) {
	is, ok := s.(tenant.IdempotencyStore)
	if !ok {
		t.Fatalf("%T does not implement tenant.IdempotencyStore", s)
	}
	_, err := is.GetIdempotent(ctx, "alice", "key-1")
	wantErr(t, "GetIdempotent of an unknown key", err, tenant.ErrNotFound)

	first := tenant.IdempotentResponse{
		Actor: "alice", Key: "key-1", RequestHash: "h1", Status: 201,
		Header: map[string]string{"Location": "/v1/tenants/x", "ETag": `"1"`},
		Body:   []byte(`{"id":"x","name":"ü"}`),
	}
	saved, fresh, err := is.SaveIdempotent(ctx, first)
	if err != nil || !fresh {
		t.Fatalf("SaveIdempotent = %v, %v", fresh, err)
	}
	if saved.CreatedAt.IsZero() {
		t.Error("CreatedAt not set")
	}
	got, err := is.GetIdempotent(ctx, "alice", "key-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(saved, got); diff != "" {
		t.Errorf("GetIdempotent (-saved +got):\n%s", diff)
	}
	// The first response stays; a second save returns it.
	second := first
	second.RequestHash, second.Body = "h2", []byte(`{}`)
	kept, fresh, err := is.SaveIdempotent(ctx, second)
	if err != nil || fresh || kept.RequestHash != "h1" {
		t.Errorf("second SaveIdempotent = %+v, %v, %v; want the first response", kept, fresh, err)
	}
	// Keys are per actor.
	if _, err := is.GetIdempotent(ctx, "bob", "key-1"); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("bob sees alice's key: %v", err)
	}
	if _, fresh, err := is.SaveIdempotent(ctx, tenant.IdempotentResponse{Actor: "bob", Key: "key-1", RequestHash: "h3", Status: 200, Body: []byte(`{}`)}); err != nil || !fresh {
		t.Errorf("bob's own key-1: %v, %v", fresh, err)
	}
}
