package tenant_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

var at = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// step applies a domain rule and fails t unless it succeeds and every
// tenant-level status change it records is one the lifecycle allows.
func step(t *testing.T, what string, next *tenant.Tenant, events []tenant.Event, err error) *tenant.Tenant {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, e := range events {
		if e.Type == tenant.EventStatus && e.Placement == "" && !tenant.CanTransition(e.From, e.To) {
			t.Errorf("%s: the tenant went %s → %s, which the lifecycle forbids", what, e.From, e.To)
		}
	}
	return next
}

// observe records status for placement name at the tenant's generation.
func observe(t *testing.T, cur *tenant.Tenant, name string, status tenant.Status) *tenant.Tenant {
	t.Helper()
	next, events, err := tenant.ApplyObservation(cur, tenant.Observation{Generation: cur.Generation, Placement: name, Status: status, Settles: status.Settled()}, at)
	return step(t, name+" "+string(status), next, events, err)
}

// placed is a tenant of the named placements on provider p, each ready.
func placed(t *testing.T, p string, names ...string) *tenant.Tenant {
	t.Helper()
	in := &tenant.Tenant{Name: "acme"}
	for _, n := range names {
		in.Placements = append(in.Placements, tenant.Placement{Name: n, Provider: p, ComputeConfig: json.RawMessage(`{"image":"a"}`)})
	}
	cur, _, err := tenant.NewTenant(in, "test", at)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		cur = observe(t, cur, n, tenant.StatusProvisioning)
		cur = observe(t, cur, n, tenant.StatusReady)
	}
	if cur.Status != tenant.StatusReady {
		t.Fatalf("tenant %s, want ready", cur.Status)
	}
	return cur
}

// TestSummarizedTransitionsAreAllowed: whatever its placements do, the
// tenant's summarized status only changes as the lifecycle allows: when
// its placements are all replaced by a new one, and when one moves while
// another is still provisioning.
func TestSummarizedTransitionsAreAllowed(t *testing.T) {
	cur := placed(t, "mock", "a", "b")
	next, events, err := tenant.ApplyDesired(cur, tenant.DesiredChange{Version: cur.Version,
		Placements: []tenant.PlacementSpec{{Name: "c", Provider: "mock", ComputeConfig: json.RawMessage(`{"image":"c"}`)}}}, at)
	cur = step(t, "replace a and b by c", next, events, err)
	for _, o := range []struct {
		name   string
		status tenant.Status
	}{{"c", tenant.StatusProvisioning}, {"a", tenant.StatusDeleting}, {"a", tenant.StatusDeleted}, {"b", tenant.StatusDeleting}, {"b", tenant.StatusDeleted}, {"c", tenant.StatusReady}} {
		cur = observe(t, cur, o.name, o.status)
	}
	if cur.Status != tenant.StatusReady || len(cur.Placements) != 1 || cur.Placements[0].Name != "c" {
		t.Errorf("after the replacement: %s, placements %v", cur.Status, cur.PlacementNames())
	}

	// A move of b while a is still provisioning: the tenant stays
	// provisioning (it never was ready).
	in := &tenant.Tenant{Name: "fresh", Placements: []tenant.Placement{
		{Name: "a", Provider: "mock", ComputeConfig: json.RawMessage(`{"image":"a"}`)},
		{Name: "b", Provider: "mock", ComputeConfig: json.RawMessage(`{"image":"b"}`)}}}
	cur, _, err = tenant.NewTenant(in, "test", at)
	if err != nil {
		t.Fatal(err)
	}
	cur = observe(t, cur, "a", tenant.StatusProvisioning)
	cur = observe(t, cur, "b", tenant.StatusProvisioning)
	cur = observe(t, cur, "b", tenant.StatusReady)
	next, events, err = tenant.ApplyDesired(cur, tenant.DesiredChange{Version: cur.Version,
		Move: &tenant.MoveAction{Kind: tenant.MoveStart, Placement: "b", Provider: "other", ComputeConfig: json.RawMessage(`{"image":"b"}`)}}, at)
	cur = step(t, "move b", next, events, err)
	if cur.Status != tenant.StatusProvisioning {
		t.Errorf("a tenant never ready that moves a placement is %s, want provisioning", cur.Status)
	}
}

// TestMoveRules: a target config that no store could keep is refused; a
// failed step of a move fails the tenant, says why, and approve tries it
// again; a move switched is not cancelled; forget drops a move.
func TestMoveRules(t *testing.T) {
	cur := placed(t, "mock", "web")
	start := func(config string) (*tenant.Tenant, []tenant.Event, error) {
		return tenant.ApplyDesired(cur, tenant.DesiredChange{Version: cur.Version,
			Move: &tenant.MoveAction{Kind: tenant.MoveStart, Provider: "other", ComputeConfig: json.RawMessage(config)}}, at)
	}
	if _, _, err := start(`{"image":"a\u0000b"}`); !errors.Is(err, tenant.ErrInvalid) {
		t.Errorf("a target config with U+0000: %v, want ErrInvalid", err)
	}
	next, events, err := start(`{"image":"b"}`)
	cur = step(t, "start", next, events, err)
	if cur.Status != tenant.StatusUpdating || !cur.NeedsWork() {
		t.Errorf("a moving tenant is %s (needs work %t), want updating", cur.Status, cur.NeedsWork())
	}
	other := func(status tenant.Status, msg string) {
		t.Helper()
		next, events, err := tenant.ApplyObservation(cur, tenant.Observation{Generation: cur.Generation, Placement: "web", Other: true,
			Status: status, Settles: status.Settled(), Message: msg}, at)
		cur = step(t, "target "+string(status), next, events, err)
	}
	other(tenant.StatusProvisioning, "")
	other(tenant.StatusFailed, "image not found")
	if cur.Status != tenant.StatusFailed || !strings.Contains(cur.StatusMessage, "image not found") {
		t.Errorf("a failed target: tenant %s %q, want failed with the cause", cur.Status, cur.StatusMessage)
	}
	next, events, err = tenant.ApplyDesired(cur, tenant.DesiredChange{Version: cur.Version, Move: &tenant.MoveAction{Kind: tenant.MoveApprove}}, at)
	cur = step(t, "approve", next, events, err)
	if o := cur.Placements[0].Move.Other; o.ObservedGeneration == cur.Generation || !cur.NeedsWork() {
		t.Errorf("approve did not re-arm the failed target: observed %d of %d", o.ObservedGeneration, cur.Generation)
	}
	other(tenant.StatusProvisioning, "")
	other(tenant.StatusReady, "")
	next, events, err = tenant.ApplyObservation(cur, tenant.Observation{Generation: cur.Generation, Placement: "web", Other: true,
		Status: tenant.StatusReady, Settles: true, MoveStep: tenant.MoveDestroyingSource}, at)
	cur = step(t, "switch", next, events, err)
	if p := cur.Placements[0]; p.Provider != "other" || p.Move.Other.Provider != "mock" || cur.Provider != "other" {
		t.Errorf("after the switch: placement on %s, the other on %s, tenant on %s", p.Provider, p.Move.Other.Provider, cur.Provider)
	}
	if _, _, err := tenant.ApplyDesired(cur, tenant.DesiredChange{Version: cur.Version, Move: &tenant.MoveAction{Kind: tenant.MoveCancel}}, at); !errors.Is(err, tenant.ErrMoving) {
		t.Errorf("a cancel after the switch: %v, want ErrMoving", err)
	}
	forgotten, _, err := tenant.ApplyForget(cur, 0, "test", "gone", at)
	if err != nil || forgotten.Moving() {
		t.Errorf("forget: %v; moving %t", err, forgotten != nil && forgotten.Moving())
	}
}

// sealer seals a config by prefixing it with its provider, so that a test
// sees which provider's rules sealed what is stored.
type sealer struct{ seals []string }

func (s *sealer) Seal(_, provider string, config json.RawMessage) (json.RawMessage, error) {
	s.seals = append(s.seals, provider)
	b, _ := json.Marshal(provider + "|" + string(config))
	return b, nil
}

func (s *sealer) Open(_ string, stored json.RawMessage) (json.RawMessage, error) {
	var text string
	if err := json.Unmarshal(stored, &text); err != nil {
		return nil, err
	}
	_, config, _ := strings.Cut(text, "|")
	return json.RawMessage(config), nil
}

// TestSwitchSealsAgain: after a switch to another provider with the very
// same config text, the placement's config is sealed again by the new
// provider's rules, not written as the text the old one sealed.
func TestSwitchSealsAgain(t *testing.T) {
	s := &sealer{}
	cur := placed(t, "mock", "web")
	next, _, err := tenant.ApplyDesired(cur, tenant.DesiredChange{Version: cur.Version,
		Move: &tenant.MoveAction{Kind: tenant.MoveStart, Provider: "other", ComputeConfig: json.RawMessage(`{"image":"a"}`)}}, at)
	if err != nil {
		t.Fatal(err)
	}
	// As a store writes and reads it back.
	row, err := tenant.ToStore(s, next, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	text, err := tenant.PlacementsText(row)
	if err != nil {
		t.Fatal(err)
	}
	read := *row
	if err := tenant.ReadPlacements(&read, text); err != nil {
		t.Fatal(err)
	}
	stored, err := tenant.OpenStored(s, &read)
	if err != nil {
		t.Fatal(err)
	}
	plain := read.ComputeConfig
	cur = &read
	for _, st := range []tenant.Status{tenant.StatusProvisioning, tenant.StatusReady} {
		obs := tenant.Observation{Generation: cur.Generation, Placement: "web", Other: true, Status: st, Settles: st.Settled()}
		if st == tenant.StatusReady {
			obs.MoveStep = tenant.MoveDestroyingSource
		}
		if cur, _, err = tenant.ApplyObservation(cur, obs, at); err != nil {
			t.Fatal(err)
		}
	}
	// A store passes the config it read and its stored text, for a write
	// that keeps the config to keep the text.
	row, err = tenant.ToStore(s, cur, plain, stored)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(row.ComputeConfig), `"other|`) || !strings.HasPrefix(string(row.Placements[0].Move.Other.ComputeConfig), `"mock|`) {
		t.Errorf("after the switch: the placement's config stored %s, the source's %s", row.ComputeConfig, row.Placements[0].Move.Other.ComputeConfig)
	}
}

// A tenant that follows a plan has every placement on one provider, the
// plan's (which the stores check against the first's).
func TestPlacementsOnAPlanShareAProvider(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	in := &tenant.Tenant{Name: "acme", Plan: &tenant.PlanRef{Name: "regional", Version: 1}, Placements: []tenant.Placement{
		{Name: "eu", Provider: "docker", ComputeConfig: json.RawMessage(`{}`)},
		{Name: "us", Provider: "nomad", ComputeConfig: json.RawMessage(`{}`)},
	}}
	_, _, err := tenant.NewTenant(in, "test", now)
	if !errors.Is(err, tenant.ErrInvalid) || !strings.Contains(err.Error(), "/placements/1/compute_provider") {
		t.Errorf("a tenant on a plan with placements on two providers: %v; want ErrInvalid at /placements/1/compute_provider", err)
	}
	in.Placements[1].Provider = "docker"
	if _, _, err := tenant.NewTenant(in, "test", now); err != nil {
		t.Errorf("a tenant on a plan with placements on one provider: %v", err)
	}
}
