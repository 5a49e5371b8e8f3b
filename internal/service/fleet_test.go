package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/service"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

func TestPublishVersionReportsEveryProblem(t *testing.T) {
	f := newFixture(t, true)
	f.plan(t, "standard")
	_, err := f.svc.PublishVersion(context.Background(), service.NewVersion{Plan: "standard",
		Config: json.RawMessage(`{"replicas":"many","image":7}`), Message: "bad\x00"}, "alice", nil)
	refused := mustRefuse(t, err, service.KindInvalid, wire.CodeInvalidComputeConfig, "/config/image")
	var at []string
	for _, fe := range refused.Fields {
		at = append(at, fe.Pointer)
	}
	if got := strings.Join(at, " "); got != "/config/image /config/replicas /message" {
		t.Errorf("fields at fault %q; want each of the config's, then the message's, in pointer order", got)
	}
	_, err = f.svc.PublishVersion(context.Background(), service.NewVersion{Plan: "gold", Config: json.RawMessage(`{}`)}, "alice", nil)
	mustRefuse(t, err, service.KindNotFound, wire.CodePlanNotFound, "")
}

func TestDeletePlanSaysWhatUsesIt(t *testing.T) {
	f := newFixture(t, true)
	f.plan(t, "standard", `{"image":"plan:1"}`)
	f.create(t, service.NewTenant{Name: "acme", ComputeConfig: json.RawMessage(`{}`), Plan: &tenant.PlanRef{Name: "standard"}})
	refused := mustRefuse(t, f.svc.DeletePlan(context.Background(), "standard"), service.KindConflict, wire.CodePlanInUse, "")
	if !strings.Contains(refused.Detail, "acme") {
		t.Errorf("detail %q does not name the tenant that follows the plan", refused.Detail)
	}
}

// TestPlanRollout: the fleet planner takes the followers that are not on
// the target, says what changes for each, and refuses a target that does
// not resolve with a tenant's own config, naming it; nothing is started.
func TestPlanRollout(t *testing.T) {
	f := newFixture(t, true)
	ctx := context.Background()
	f.plan(t, "standard", `{"image":"plan:1"}`)
	for _, name := range []string{"acme", "globex"} {
		f.create(t, service.NewTenant{Name: name, ComputeConfig: json.RawMessage(`{}`), Plan: &tenant.PlanRef{Name: "standard"}})
	}
	f.create(t, service.NewTenant{Name: "pinned", ComputeConfig: json.RawMessage(`{}`), Plan: &tenant.PlanRef{Name: "standard", Pinned: true}})
	if _, err := f.svc.PublishVersion(ctx, service.NewVersion{Plan: "standard", Config: json.RawMessage(`{"image":"plan:2"}`)}, "alice", nil); err != nil {
		t.Fatal(err)
	}
	fp, err := f.svc.PlanRollout(ctx, service.RolloutRequest{Spec: fleet.Spec{Plan: "standard"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if fp.Spec.To != 2 || len(fp.Members) != 2 || len(fp.Selection.Pinned) != 1 || len(fp.Diffs) != 1 || fp.Diffs[0].Tenants != 2 {
		t.Fatalf("fleet plan to %d: %d members, %d pinned, diffs %+v; want 2 members to version 2 sharing one diff, 1 pinned",
			fp.Spec.To, len(fp.Members), len(fp.Selection.Pinned), fp.Diffs)
	}
	for _, m := range fp.Members {
		if mv := fp.Moves[m.TenantID]; !mv.Changed || mv.Diff != "d1" {
			t.Errorf("tenant %s moves %+v; want changed, diff d1", m.TenantName, mv)
		}
	}
	if _, err := f.svc.StartRollout(ctx, fp, "alice", nil); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.StartRollout(ctx, fp, "alice", nil)
	mustRefuse(t, err, service.KindConflict, wire.CodeRolloutActive, "")

	// A version without an image breaks the tenant that has none of its
	// own: it is refused, naming it, and nothing starts.
	f.plan(t, "strict", `{"image":"s:1"}`)
	f.create(t, service.NewTenant{Name: "relies", ComputeConfig: json.RawMessage(`{}`), Plan: &tenant.PlanRef{Name: "strict"}})
	f.create(t, service.NewTenant{Name: "owns", ComputeConfig: json.RawMessage(`{"image":"own:1"}`), Plan: &tenant.PlanRef{Name: "strict"}})
	if _, err := f.svc.PublishVersion(ctx, service.NewVersion{Plan: "strict", Config: json.RawMessage(`{"env":{"A":"1"}}`)}, "alice", nil); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.PlanRollout(ctx, service.RolloutRequest{Spec: fleet.Spec{Plan: "strict"}}, false)
	var breaks *service.BreaksTenantsError
	if !errors.As(err, &breaks) || len(breaks.Tenants) != 1 || breaks.Tenants[0].Tenant.Name != "relies" {
		t.Fatalf("plan of a version that breaks a tenant: %v; want a BreaksTenantsError naming relies alone", err)
	}
	if active, err := f.store.ListRollouts(ctx, fleet.RolloutListOptions{Plan: "strict"}); err != nil || len(active) != 0 {
		t.Fatalf("rollouts of strict: %d, %v; want none", len(active), err)
	}
}

func TestPlanRolloutReportsEveryProblem(t *testing.T) {
	f := newFixture(t, true)
	f.plan(t, "standard", `{"image":"plan:1"}`)
	_, err := f.svc.PlanRollout(context.Background(), service.RolloutRequest{Spec: fleet.Spec{Plan: "standard", To: 5, From: 7}, Bake: "soon", Deadline: "0s"}, true)
	if !errors.Is(err, fleet.ErrInvalid) {
		t.Fatalf("PlanRollout: %v; want fleet.ErrInvalid", err)
	}
	for _, at := range []string{"/bake", "/deadline", "/to_version", "/from_version"} {
		if !strings.Contains(err.Error(), at) {
			t.Errorf("%v does not name %s", err, at)
		}
	}
}

func TestActOnRolloutRefusesAStaleVersion(t *testing.T) {
	f := newFixture(t, true)
	ctx := context.Background()
	f.plan(t, "standard", `{"image":"plan:1"}`)
	f.create(t, service.NewTenant{Name: "acme", ComputeConfig: json.RawMessage(`{}`), Plan: &tenant.PlanRef{Name: "standard"}})
	if _, err := f.svc.PublishVersion(ctx, service.NewVersion{Plan: "standard", Config: json.RawMessage(`{"image":"plan:2"}`)}, "alice", nil); err != nil {
		t.Fatal(err)
	}
	fp, err := f.svc.PlanRollout(ctx, service.RolloutRequest{Spec: fleet.Spec{Plan: "standard"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := f.svc.StartRollout(ctx, fp, "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	pause := service.RolloutAction{Rollout: ro.ID, Expect: service.Versions{ro.Version + 1}, Do: func(r *fleet.Rollout, _ []fleet.Member, now time.Time) (*fleet.Rollout, fleet.Event, error) {
		return fleet.Pause(r, "bob", now)
	}}
	var stale *service.StaleError
	if _, err := f.svc.ActOnRollout(ctx, pause); !errors.As(err, &stale) || stale.Current != ro.Version {
		t.Fatalf("pause with a version the rollout does not have: %v; want a StaleError saying %d", err, ro.Version)
	}
	pause.Expect = service.Versions{ro.Version}
	if got, err := f.svc.ActOnRollout(ctx, pause); err != nil || got.State != fleet.StatePaused {
		t.Fatalf("pause: %+v, %v; want it paused", got, err)
	}
	_, err = f.svc.GetRollout(ctx, "no-such-rollout")
	mustRefuse(t, err, service.KindNotFound, wire.CodeRolloutNotFound, "")
}
