package storetest

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// testForget: a tenant is deleted at once from any status, keeps its
// resource ids, frees its name, and its history says who forgot it and why.
func testForget(t *testing.T, s tenant.Store) {
	f, ok := s.(tenant.Forgetter)
	if !ok {
		t.Fatalf("%T does not implement tenant.Forgetter", s)
	}
	ready := mustObserve(t, s, mustCreate(t, s, newTenant("ready")), tenant.StatusProvisioning)
	ready, err := s.UpdateObserved(ctx, ready.ID, tenant.Observation{Generation: ready.Generation, Status: tenant.StatusReady, Settles: true,
		ResourceIDs: map[string]string{"container/app": "c1"}, Endpoints: []provider.Endpoint{{Container: "app", ContainerPort: 80, Protocol: "tcp", Address: "127.0.0.1:32768"}}})
	if err != nil {
		t.Fatal(err)
	}
	deleting, err := s.RequestDeletion(ctx, mustCreate(t, s, newTenant("deleting")).ID, 0, "test")
	if err != nil {
		t.Fatal(err)
	}
	requested := mustCreate(t, s, newTenant("requested"))

	if _, err := f.Forget(ctx, ready.ID, ready.Version+1, "ops", "gone"); !errors.Is(err, tenant.ErrConflict) {
		t.Errorf("Forget with a stale version: %v, want ErrConflict", err)
	}
	for _, cur := range []*tenant.Tenant{ready, deleting, requested} {
		got, err := f.Forget(ctx, cur.ID, cur.Version, "ops", "forgotten: provider docker is not enabled")
		if err != nil {
			t.Fatalf("Forget(%s): %v", cur.Name, err)
		}
		if got.Status != tenant.StatusDeleted || got.DeletedAt == nil || got.ObservedGeneration != got.Generation || got.Generation != cur.Generation+1 ||
			got.Version != cur.Version+1 || got.StatusMessage != "forgotten: provider docker is not enabled" || len(got.Endpoints) != 0 {
			t.Errorf("Forget(%s) = %+v", cur.Name, got)
		}
		stored, err := s.Get(ctx, cur.ID, tenant.GetOptions{IncludeDeleted: true})
		if err != nil {
			t.Fatal(err)
		}
		sameTenant(t, "Get after Forget("+cur.Name+")", stored, got)
		if _, err := s.Get(ctx, cur.Name, tenant.GetOptions{}); !errors.Is(err, tenant.ErrNotFound) {
			t.Errorf("Get(%s) of a forgotten tenant: %v, want ErrNotFound", cur.Name, err)
		}
		evs := mustEvents(t, s, cur.ID)
		last2 := evs[len(evs)-2:]
		var got2 []string
		for _, e := range last2 {
			got2 = append(got2, string(e.Type)+" "+string(e.From)+"→"+string(e.To)+" "+e.Actor+" "+e.Message)
		}
		want := []string{"forgotten → ops forgotten: provider docker is not enabled",
			"status " + string(cur.Status) + "→deleted ops forgotten: provider docker is not enabled"}
		if diff := cmp.Diff(want, got2); diff != "" {
			t.Errorf("events of %s (-want +got):\n%s", cur.Name, diff)
		}
		if _, err := f.Forget(ctx, cur.ID, 0, "ops", "again"); !errors.Is(err, tenant.ErrNotFound) {
			t.Errorf("Forget of a deleted tenant: %v, want ErrNotFound", err)
		}
	}
	if got := mustGetDeleted(t, s, ready.ID); got.ResourceIDs["container/app"] != "c1" {
		t.Errorf("a forgotten tenant must keep the ids of what may still run: %v", got.ResourceIDs)
	}
	mustCreate(t, s, newTenant("ready")) // the name is free again
	if _, err := f.Forget(ctx, "01a211c2-620a-7b66-a23c-b51a027a7290", 0, "ops", "x"); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("Forget of an unknown id: %v, want ErrNotFound", err)
	}
}

func mustGetDeleted(t *testing.T, s tenant.Store, id string) *tenant.Tenant {
	t.Helper()
	out, err := s.Get(ctx, id, tenant.GetOptions{IncludeDeleted: true})
	if err != nil {
		t.Fatalf("Get(%s, IncludeDeleted): %v", id, err)
	}
	return out
}

func testCountByProvider(t *testing.T, s tenant.Store) {
	c, ok := s.(tenant.ProviderCounter)
	if !ok {
		t.Fatalf("%T does not implement tenant.ProviderCounter", s)
	}
	for _, tc := range []struct{ name, provider string }{{"a", "mock"}, {"b", "docker"}, {"c", "docker"}, {"d", "docker"}} {
		in := newTenant(tc.name)
		in.Provider = tc.provider
		mustCreate(t, s, in)
	}
	mustDelete(t, s, mustGet(t, s, "d"))
	got, err := c.CountByProvider(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"mock": 1, "docker": 2}, got); diff != "" {
		t.Errorf("CountByProvider (-want +got):\n%s", diff)
	}
}
