package client_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

// A plan's Create retried with its IdempotencyKey gets the plan it made, a
// Publish the version it published,
// and a Start the rollout it started, as a client whose answer was lost
// retries: not another version, not a 409 for its own rollout.
func TestFleetIdempotent(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{}).Client(t, "")
	create := client.CreatePlanOptions{IdempotencyKey: "create-1"}
	p, err := c.Plans().Create(ctx, client.CreatePlanRequest{Name: "standard"}, create)
	if err != nil {
		t.Fatal(err)
	}
	if p2, err := c.Plans().Create(ctx, client.CreatePlanRequest{Name: "standard"}, create); err != nil || p2.CreatedAt != p.CreatedAt {
		t.Errorf("a create retried with its key: %+v, %v; want the plan it made", p2, err)
	}
	publish := client.PublishVersionRequest{Config: json.RawMessage(appConfig), Message: "app 1"}
	popts := client.PublishOptions{IdempotencyKey: "publish-1"}
	v, err := c.Plans().Publish(ctx, "standard", publish, popts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Plans().Publish(ctx, "standard", publish, popts)
	if err != nil {
		t.Fatalf("the same key again: %v", err)
	}
	if again.Version != v.Version || v.Version != 1 {
		t.Errorf("the retry published version %d, the first %d; want 1 both", again.Version, v.Version)
	}
	if vs, err := c.Plans().Versions(ctx, "standard"); err != nil || len(vs.Versions) != 1 {
		t.Errorf("versions %+v, %v; want 1", vs, err)
	}
	_, err = c.Plans().Publish(ctx, "standard", client.PublishVersionRequest{Config: json.RawMessage(`{"image":"example.com/app:2"}`)}, popts)
	mustAPIError(t, err, http.StatusUnprocessableEntity, "idempotency_key_reused")

	if _, err := c.Tenants().Create(ctx, client.CreateTenantRequest{Name: "acme", ComputeConfig: json.RawMessage(`{}`),
		Plan: &client.PlanChoice{Name: "standard"}}, client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Plans().Publish(ctx, "standard", client.PublishVersionRequest{Config: json.RawMessage(`{"image":"example.com/app:2"}`)}, client.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	start := client.CreateRolloutRequest{Plan: "standard", ToVersion: 2}
	sopts := client.StartOptions{IdempotencyKey: "start-1"}
	ro, err := c.Rollouts().Start(ctx, start, sopts)
	if err != nil {
		t.Fatal(err)
	}
	retried, err := c.Rollouts().Start(ctx, start, sopts)
	if err != nil {
		t.Fatalf("the same key again: %v", err)
	}
	if retried.ID != ro.ID || retried.Version != ro.Version {
		t.Errorf("the retry started rollout %s (version %d), the first %s (version %d)", retried.ID, retried.Version, ro.ID, ro.Version)
	}
	_, err = c.Rollouts().Start(ctx, start, client.StartOptions{})
	mustAPIError(t, err, http.StatusConflict, "rollout_active")
	if list, err := c.Rollouts().List(ctx, client.RolloutListOptions{}); err != nil || len(list.Rollouts) != 1 {
		t.Errorf("rollouts %+v, %v; want 1", list, err)
	}
}
