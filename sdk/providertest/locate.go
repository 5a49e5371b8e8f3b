package providertest

import (
	"context"
	"errors"
	"testing"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// testLocate: a Locator finds a workload from the tenant as landlord records
// it, with or without the resource ids of the last Provision (a crash may
// lose them), and DestroyOf removes it even with a cancelled context.
func (s *suite) testLocate(t *testing.T) {
	l, ok := s.p.(provider.Locator)
	if !ok {
		t.Skip("the provider finds workloads by tenant id alone (not a provider.Locator)")
	}
	tn := s.newTenant(t)
	v0 := s.spec(t, tn, 0)
	first := s.provision(t, v0)
	s.waitRunning(t, v0)
	recorded := provider.TenantRef{ID: tn.id, Name: tn.name, Provider: s.p.Name(), Config: s.config(t, 0), ResourceIDs: first.ResourceIDs}
	lost := recorded
	lost.ResourceIDs = nil
	for name, ref := range map[string]provider.TenantRef{"with resource ids": recorded, "without resource ids": lost} {
		st, err := l.GetStatusOf(context.Background(), ref)
		if err != nil || !runs(st, v0) {
			t.Errorf("GetStatusOf %s = %s, %v; want the running workload", name, describe(st), err)
		}
		s.noSecret(t, "GetStatusOf", st)
	}
	for i := range 2 {
		if err := l.DestroyOf(cancelled(), lost); err != nil {
			t.Fatalf("DestroyOf with a cancelled context (call %d) = %v, want nil", i+1, err)
		}
		for name, ref := range map[string]provider.TenantRef{"with resource ids": recorded, "without resource ids": lost} {
			if st, err := l.GetStatusOf(context.Background(), ref); !errors.Is(err, provider.ErrTenantNotFound) {
				t.Errorf("GetStatusOf %s after DestroyOf = %s, %v; want an error wrapping ErrTenantNotFound", name, describe(st), err)
			}
		}
	}
	s.expectNotFound(t, tn.id, "after DestroyOf")
}
