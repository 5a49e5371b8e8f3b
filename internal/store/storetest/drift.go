package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// testDrift: an observation's drift report is stored with the tenant,
// read back whole, kept by observations without one, and recorded as a
// drift_detected event when it is news, not when the same drift is seen
// again.
func testDrift(t *testing.T, s tenant.Store) {
	cur := mustCreate(t, s, newTenant("acme"))
	ready := mustObserve(t, s, mustObserve(t, s, cur, tenant.StatusProvisioning), tenant.StatusReady)
	if ready.Drift != nil {
		t.Fatalf("a new tenant has drift %+v", ready.Drift)
	}
	report := &tenant.DriftReport{
		DetectedAt: time.Date(2026, 11, 27, 10, 0, 0, 123456000, time.UTC),
		Generation: ready.Generation,
		Policy:     provider.DriftObserve,
		Differences: []provider.Drift{
			{Path: "deployment/replicas", Kind: provider.DriftScale, Expected: "1", Found: "5"},
			{Path: "service", Kind: provider.DriftMissing, Expected: "present"},
		},
	}
	observe := func(d *tenant.DriftReport, msg string) *tenant.Tenant {
		t.Helper()
		out, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: ready.Generation, Status: tenant.StatusReady, Message: msg, Drift: d, Actor: "controller"})
		if err != nil {
			t.Fatalf("UpdateObserved with drift: %v", err)
		}
		return out
	}
	got := observe(report, "drift observed")
	if diff := cmp.Diff(report, got.Drift); diff != "" {
		t.Errorf("drift returned by UpdateObserved (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(report, mustGet(t, s, cur.ID).Drift); diff != "" {
		t.Errorf("drift read back (-want +got):\n%s", diff)
	}
	observe(report, "drift observed again")
	if kept := observe(nil, "no drift this time").Drift; !kept.Same(report) {
		t.Errorf("an observation without drift replaced it: %+v", kept)
	}
	drifts := func() []string {
		var out []string
		for _, e := range mustEvents(t, s, cur.ID) {
			if e.Type == tenant.EventDrift {
				out = append(out, e.Message)
			}
		}
		return out
	}
	want := "drift at generation 1, observed only (drift policy observe): not repaired: deployment/replicas: expected 1, found 5; service: missing (expected present)"
	if got := drifts(); len(got) != 1 || got[0] != want {
		t.Errorf("drift events = %q, want one: %q", got, want)
	}
	// Resolved, the report stays, closed, and writes no event; the same
	// drift found again after that is news.
	resolvedAt := report.DetectedAt.Add(time.Minute)
	if got := observe(report.Resolved(resolvedAt), "in sync").Drift; got.Open() || !got.ResolvedAt.Equal(resolvedAt) {
		t.Errorf("resolved drift stored as %+v", got)
	}
	observe(report, "drift observed again")
	if got := drifts(); len(got) != 2 {
		t.Errorf("%d drift events after the drift came back, want 2", len(got))
	}
}
