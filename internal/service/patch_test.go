package service_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/service"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

var stored = &tenant.Tenant{ComputeConfig: json.RawMessage(`{"image":"a:1","env":{"A":"1","B":"2"}}`),
	Labels: map[string]string{"tier": "gold", "team": "x"}, Annotations: map[string]string{"note": "n"},
	Plan: &tenant.PlanRef{Name: "standard", Version: 2}, MaintenanceWindow: &tenant.Window{Start: "01:00", End: "02:00"}}

// TestReplaceKeepsWhatItLeavesOut: a replace that leaves out labels,
// annotations or the window keeps the tenant's; empty ones clear them.
func TestReplaceKeepsWhatItLeavesOut(t *testing.T) {
	got, err := service.Replace(service.Replacement{ComputeConfig: json.RawMessage(`{"image":"b"}`), Labels: map[string]string{}})(stored)
	if err != nil {
		t.Fatal(err)
	}
	want := service.Desired{ComputeConfig: json.RawMessage(`{"image":"b"}`), Labels: map[string]string{}, Annotations: stored.Annotations,
		Plan: stored.Plan, MaintenanceWindow: stored.MaintenanceWindow}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replace (-want +got):\n%s", diff)
	}
}

func TestPatchMerges(t *testing.T) {
	patch := map[string]json.RawMessage{
		"compute_config":     json.RawMessage(`{"env":{"A":null,"C":"3"}}`),
		"labels":             json.RawMessage(`{"team":null,"new":"y"}`),
		"plan":               json.RawMessage(`{"version":null}`),
		"maintenance_window": json.RawMessage(`{"end":"03:00"}`),
	}
	got, err := service.Patch(patch)(stored)
	if err != nil {
		t.Fatal(err)
	}
	want := service.Desired{ComputeConfig: json.RawMessage(`{"env":{"B":"2","C":"3"},"image":"a:1"}`),
		Labels: map[string]string{"tier": "gold", "new": "y"}, Annotations: stored.Annotations,
		Plan: &tenant.PlanRef{Name: "standard"}, MaintenanceWindow: &tenant.Window{Start: "01:00", End: "03:00"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
	if stored.Labels["team"] != "x" || stored.Plan.Version != 2 {
		t.Error("the patch changed the stored tenant it was made from")
	}
	for member, raw := range map[string]string{"labels": `["x"]`, "plan": `"gold"`, "maintenance_window": `[1]`, "compute_config": `[]`} {
		_, err := service.Patch(map[string]json.RawMessage{member: json.RawMessage(raw)})(stored)
		mustRefuse(t, err, service.KindMalformed, wire.CodeInvalidBody, "/"+member)
	}
}
