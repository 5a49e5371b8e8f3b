package rollout_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/rollout"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// BenchmarkTick measures one step of a rollout of a plan of 5,000 tenants
// on SQLite, mid-way: its first wave of 500 changing, the rest pending.
// A step reads the plan's followers and the members, and decides nothing
// here (no tenant has converged), which is what the driver does on most
// wakes during a wave.
func BenchmarkTick(b *testing.B) {
	const tenants = 5000
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "landlord.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreatePlan(ctx, &fleet.Plan{Name: "standard", Provider: "mock"}, "bench"); err != nil {
		b.Fatal(err)
	}
	for _, img := range []string{"app:1", "app:2"} {
		if _, err := s.PublishVersion(ctx, "standard", json.RawMessage(fmt.Sprintf(`{"image":%q}`, img)), "", "bench"); err != nil {
			b.Fatal(err)
		}
	}
	for i := range tenants {
		t := &tenant.Tenant{Name: fmt.Sprintf("t%05d", i), Provider: "mock", ComputeConfig: json.RawMessage(`{"env":{"A":"1"}}`),
			Labels: map[string]string{"ring": "main"}, Plan: &tenant.PlanRef{Name: "standard", Version: 1}}
		if _, err := s.Create(ctx, t, "bench"); err != nil {
			b.Fatal(err)
		}
	}
	var all []*tenant.Tenant
	opts := tenant.ListOptions{Plan: "standard", PageSize: tenant.MaxPageSize}
	for {
		page, err := s.List(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, page.Tenants...)
		if opts.PageToken = page.NextPageToken; opts.PageToken == "" {
			break
		}
	}
	spec := fleet.Spec{Plan: "standard", To: 2, Waves: []fleet.Wave{{Name: "first", Count: 500}}}
	waves, members := fleet.Assign(spec, fleet.Select(spec, all).Candidates)
	if _, err := s.CreateRollout(ctx, &fleet.Rollout{Spec: spec, Waves: waves, CreatedBy: "bench"}, members); err != nil {
		b.Fatal(err)
	}
	d := rollout.New(s, s, rollout.Options{Identity: "bench"})
	if err := d.Tick(ctx); err != nil { // moves the first wave's 500
		b.Fatal(err)
	}
	b.ResetTimer()
	b.ReportAllocs()
	for b.Loop() {
		if err := d.Tick(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
