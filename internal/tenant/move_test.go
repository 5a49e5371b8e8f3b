package tenant_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// A move makes its tenant updating in the write that asks for it, with
// that status's event, rather than at the controller's first look: the
// answer to the request says so, and a landlord that stops before that
// look finds the move among its work (NeedsWork, as ListWork) again.
func TestMoveStartMakesTheTenantUpdating(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cur, _, err := tenant.NewTenant(&tenant.Tenant{Name: "acme", Provider: "docker", ComputeConfig: json.RawMessage(`{"image": "app:1"}`)}, "test", now)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []tenant.Status{tenant.StatusProvisioning, tenant.StatusReady} {
		if cur, _, err = tenant.ApplyObservation(cur, tenant.Observation{Generation: cur.Generation, Status: s, Settles: s == tenant.StatusReady}, now); err != nil {
			t.Fatalf("observe %s: %v", s, err)
		}
	}
	if cur.Status != tenant.StatusReady || cur.NeedsWork() {
		t.Fatalf("before the move the tenant is %s, needs work %t; want ready and not", cur.Status, cur.NeedsWork())
	}
	next, events, err := tenant.ApplyDesired(cur, tenant.DesiredChange{Version: cur.Version, Actor: "test",
		Move: &tenant.MoveAction{Kind: tenant.MoveStart, Provider: "nomad", ComputeConfig: json.RawMessage(`{"image": "app:1"}`)}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if next.Status != tenant.StatusUpdating || !next.NeedsWork() {
		t.Errorf("the tenant a move starts is %s, needs work %t; want updating and does", next.Status, next.NeedsWork())
	}
	var status []tenant.Event
	for _, ev := range events {
		if ev.Type == tenant.EventStatus {
			status = append(status, ev)
		}
	}
	if len(status) != 1 || status[0].From != tenant.StatusReady || status[0].To != tenant.StatusUpdating {
		t.Errorf("the move's status events are %+v, want one from ready to updating", status)
	}
	next, _, err = tenant.ApplyDesired(next, tenant.DesiredChange{Version: next.Version, Move: &tenant.MoveAction{Kind: tenant.MoveCancel}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if next.Status != tenant.StatusUpdating {
		t.Errorf("the tenant of a cancelled move, its target not yet destroyed, is %s; want updating", next.Status)
	}
}
