package client_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
	"github.com/jaxxstorm/landlord/internal/poll"
)

// TestPlansAndRollout drives a plan's life and a rollout through the
// client, on a server whose controller and rollout driver run.
func TestPlansAndRollout(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{Controller: true}).Client(t, "")
	plans, rollouts := c.Plans(), c.Rollouts()

	p, err := plans.Create(ctx, client.CreatePlanRequest{Name: "standard", Description: "the usual"}, client.CreatePlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Provider != "mock" || p.LatestVersion != 0 {
		t.Errorf("created %+v", p)
	}
	if _, err := plans.Create(ctx, client.CreatePlanRequest{Name: "standard"}, client.CreatePlanOptions{}); !client.IsConflict(err) {
		t.Errorf("a second create: %v, want a 409", err)
	}
	for _, img := range []string{"app:1", "app:2"} {
		if _, err := plans.Publish(ctx, "standard", client.PublishVersionRequest{Config: json.RawMessage(fmt.Sprintf(`{"image":%q}`, img))}, client.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = plans.Publish(ctx, "standard", client.PublishVersionRequest{Config: json.RawMessage(`{"image":7}`)}, client.PublishOptions{})
	if e := asError(t, err); e.Status != http.StatusUnprocessableEntity || len(e.Problem.Errors) == 0 || e.Problem.Errors[0].Pointer != "/config/image" {
		t.Errorf("a bad version: %v, want a 422 at /config/image", err)
	}
	versions, err := plans.Versions(ctx, "standard")
	if err != nil || len(versions.Versions) != 2 {
		t.Fatalf("versions %+v, %v", versions, err)
	}
	if v, err := plans.Version(ctx, "standard", 2); err != nil || string(v.Config) != `{"image":"app:2"}` {
		t.Errorf("version 2: %+v, %v", v, err)
	}
	// The plan's current version is v1 until a rollout moves it on.
	p, err = plans.Get(ctx, "standard")
	if err != nil || p.CurrentVersion != 1 || p.LatestVersion != 2 {
		t.Fatalf("plan %+v, %v; want current 1, latest 2", p, err)
	}

	for i := range 4 {
		labels := map[string]string{}
		if i == 0 {
			labels["ring"] = "canary"
		}
		_, err := c.Tenants().Create(ctx, client.CreateTenantRequest{Name: fmt.Sprintf("t%d", i), ComputeConfig: json.RawMessage(`{}`),
			Labels: labels, Plan: &client.PlanChoice{Name: "standard"}}, client.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	on, err := c.Tenants().List(ctx, client.ListOptions{Plan: "standard"})
	if err != nil || len(on.Tenants) != 4 {
		t.Fatalf("tenants of standard: %+v, %v", on, err)
	}
	for _, tn := range on.Tenants {
		if _, err := c.Tenants().Wait(ctx, tn.ID, client.UntilReady, nil); err != nil {
			t.Fatal(err)
		}
	}

	req := client.CreateRolloutRequest{Plan: "standard", ToVersion: 2, Waves: []client.WaveSpec{
		{Name: "canary", Selector: map[string]string{"ring": "canary"}, Count: 1}, {Name: "rest"}}}
	fp, err := rollouts.Plan(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(fp.Waves) != 2 || fp.Waves[0].Size != 1 || fp.Waves[0].Tenants[0].Name != "t0" || fp.Waves[1].Size != 3 ||
		fp.Counts.Actions[client.ActionInPlace] != 4 {
		t.Errorf("fleet plan %+v", fp)
	}
	if list, err := rollouts.List(ctx, client.RolloutListOptions{}); err != nil || len(list.Rollouts) != 0 {
		t.Errorf("a plan started a rollout: %+v, %v", list, err)
	}

	ro, err := rollouts.Start(ctx, req, client.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rollouts.Start(ctx, req, client.StartOptions{}); !client.IsConflict(err) {
		t.Errorf("a second rollout of the plan: %v, want a 409", err)
	}
	poll.Until(t, "the rollout completes", 30*time.Second, func() (bool, string) {
		if ro, err = rollouts.Get(ctx, ro.ID); err != nil {
			t.Fatal(err)
		}
		return ro.State == client.RolloutCompleted, fmt.Sprintf("%+v", ro)
	})
	if ro.Counts[client.MemberDone] != 4 {
		t.Errorf("completed with counts %v", ro.Counts)
	}
	members, err := rollouts.Members(ctx, ro.ID)
	if err != nil || len(members.Members) != 4 || members.Members[0].TenantName != "t0" || members.Members[0].WaveName != "canary" {
		t.Errorf("members %+v, %v", members, err)
	}
	events, err := rollouts.Events(ctx, ro.ID, 0, 0)
	if err != nil || len(events.Events) == 0 {
		t.Fatalf("events %+v, %v", events, err)
	}
	last := events.Events[len(events.Events)-1].Seq
	if more, err := rollouts.Events(ctx, ro.ID, last, 0); err != nil || len(more.Events) != 0 {
		t.Errorf("events after the last: %+v, %v", more, err)
	}
	if p, err := plans.Get(ctx, "standard"); err != nil || p.CurrentVersion != 2 {
		t.Errorf("after the rollout, plan %+v, %v; want current 2", p, err)
	}

	// Actions on a finished rollout say which states allow them.
	_, err = rollouts.Pause(ctx, ro.ID, client.ActionOptions{})
	if e := asError(t, err); e.Status != http.StatusConflict || e.Problem.Code != "rollout_state" {
		t.Errorf("pause a completed rollout: %v, want 409 rollout_state", err)
	}
	if _, err := rollouts.Get(ctx, "nope"); !client.IsNotFound(err) {
		t.Errorf("get an unknown rollout: %v, want a 404", err)
	}
	if err := plans.Delete(ctx, "standard"); !client.IsConflict(err) {
		t.Errorf("delete a plan that tenants follow: %v, want a 409", err)
	}
}

// TestRolloutActions pauses, resumes and aborts a rollout that waits on a
// long bake, with If-Match.
func TestRolloutActions(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{Controller: true}).Client(t, "")
	if _, err := c.Plans().Create(ctx, client.CreatePlanRequest{Name: "standard"}, client.CreatePlanOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, img := range []string{"app:1", "app:2"} {
		if _, err := c.Plans().Publish(ctx, "standard", client.PublishVersionRequest{Config: json.RawMessage(fmt.Sprintf(`{"image":%q}`, img))}, client.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		if _, err := c.Tenants().Create(ctx, client.CreateTenantRequest{Name: fmt.Sprintf("t%d", i), ComputeConfig: json.RawMessage(`{}`),
			Plan: &client.PlanChoice{Name: "standard"}}, client.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ro, err := c.Rollouts().Start(ctx, client.CreateRolloutRequest{Plan: "standard", Bake: "1h", Waves: []client.WaveSpec{{Count: 1}, {}}}, client.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	paused, err := c.Rollouts().Pause(ctx, ro.ID, client.ActionOptions{IfMatch: ro.Version})
	if err != nil && !client.IsPreconditionFailed(err) {
		t.Fatal(err)
	}
	if err != nil { // the driver moved it on meanwhile
		paused, err = c.Rollouts().Pause(ctx, ro.ID, client.ActionOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	if paused.State != client.RolloutPaused {
		t.Errorf("paused: %s", paused.State)
	}
	if _, err := c.Rollouts().Resume(ctx, ro.ID, client.ActionOptions{IfMatch: paused.Version - 1}); !client.IsPreconditionFailed(err) {
		t.Errorf("resume at a stale version: %v, want a 412", err)
	}
	resumed, err := c.Rollouts().Resume(ctx, ro.ID, client.ActionOptions{})
	if err != nil || resumed.State != client.RolloutRunning {
		t.Fatalf("resume: %+v, %v", resumed, err)
	}
	aborted, err := c.Rollouts().Abort(ctx, ro.ID, true, client.ActionOptions{})
	if err != nil || (aborted.State != client.RolloutAborting && aborted.State != client.RolloutAborted) || !aborted.Rollback {
		t.Fatalf("abort: %+v, %v", aborted, err)
	}
}

func asError(t *testing.T, err error) *client.Error {
	t.Helper()
	e, ok := err.(*client.Error)
	if !ok {
		t.Fatalf("%v is not a *client.Error", err)
	}
	return e
}
