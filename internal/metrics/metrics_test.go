package metrics_test

import (
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/build"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/metrics"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

func TestMetrics(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "l.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	// Two tenants on a plan, and a rollout of them in two waves.
	if _, err := store.CreatePlan(ctx, &fleet.Plan{Name: "standard", Provider: "mock"}, "test"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := store.PublishVersion(ctx, "standard", []byte(`{"image":"x"}`), "", "test"); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a", "b"} {
		if _, err := store.Create(ctx, &tenant.Tenant{Name: name, Provider: "mock", ComputeConfig: []byte(`{"image":"x"}`),
			Plan: &tenant.PlanRef{Name: "standard", Version: 1}}, "test"); err != nil {
			t.Fatal(err)
		}
	}
	page, err := store.List(ctx, tenant.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := fleet.Spec{Plan: "standard", From: 1, To: 2, Waves: []fleet.Wave{{Name: "one", Count: 1}}}
	waves, members := fleet.Assign(spec, fleet.Select(spec, page.Tenants).Candidates)
	ro, err := store.CreateRollout(ctx, &fleet.Rollout{Spec: spec, Waves: waves, CreatedBy: "test"}, members)
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	m.WatchTenants(store, nil)
	m.WatchRollouts(store, nil)
	m.WatchQueue(func() int { return 3 })
	m.WatchPartitions(func() int { return 21 }, func() int { return 3 })
	m.ObserveHTTP("/v1/tenants/{tenant}", "GET", 200, 2*time.Millisecond)
	m.ObserveHTTP("", "GET", 404, time.Millisecond)
	m.ObserveOperation("mock", "provision", "retryable", 10*time.Millisecond)
	m.ObserveReconcile("done", time.Millisecond)
	m.ObserveDrift("kubernetes", provider.DriftScale)
	m.ObserveDrift("kubernetes", provider.DriftScale)
	m.ObservePlacementDrift("worker", "nomad", provider.DriftImage)
	m.ObservePlacementDrift(tenant.DefaultPlacement, "kubernetes", provider.DriftScale)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`landlord_tenants{status="requested"} 2`,
		`landlord_tenants{status="ready"} 0`,
		`landlord_controller_queue_depth 3`,
		`landlord_controller_partitions 21`,
		`landlord_controller_members 3`,
		`landlord_http_requests_total{code="200",method="GET",route="/v1/tenants/{tenant}"} 1`,
		`landlord_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`landlord_provider_operations_total{operation="provision",outcome="retryable",provider="mock"} 1`,
		`landlord_reconciles_total{result="done"} 1`,
		`landlord_drift_detected_total{kind="scale",placement="default",provider="kubernetes"} 3`,
		`landlord_drift_detected_total{kind="image",placement="worker",provider="nomad"} 1`,
		`landlord_build_info{goversion="` + runtime.Version() + `",revision="` + build.Read().Commit + `",version="` + build.Read().Version + `"} 1`,
		`landlord_rollout_info{from_version="1",plan="standard",rollout="` + ro.ID + `",state="running",to_version="2"} 1`,
		`landlord_rollout_wave{plan="standard",rollout="` + ro.ID + `"} 0`,
		`landlord_rollout_members{plan="standard",rollout="` + ro.ID + `",state="pending"} 2`,
		`landlord_rollout_members{plan="standard",rollout="` + ro.ID + `",state="done"} 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
