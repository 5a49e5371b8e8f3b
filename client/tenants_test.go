package client_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

func TestCreateGet(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{}).Client(t, "")
	created, err := c.Tenants().Create(ctx, client.CreateTenantRequest{
		Name:          "acme",
		ComputeConfig: json.RawMessage(`{"image":"example.com/app:1","secrets":{"PW":"hunter2"}}`),
		Labels:        map[string]string{"tier": "gold"},
		Annotations:   map[string]string{"owner": "ops"},
	}, client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Name != "acme" || created.ComputeProvider != "mock" || created.Status != client.StatusRequested || created.Version != 1 {
		t.Errorf("created %+v", created)
	}
	if strings.Contains(string(created.ComputeConfig), "hunter2") {
		t.Errorf("a secret came back: %s", created.ComputeConfig)
	}
	for _, key := range []string{"acme", created.ID} {
		got, err := c.Tenants().Get(ctx, key, client.GetOptions{})
		if err != nil {
			t.Fatalf("get %s: %v", key, err)
		}
		if diff := cmp.Diff(created, got); diff != "" {
			t.Errorf("get %s (-created +got):\n%s", key, diff)
		}
	}
}

func TestCreateDryRun(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{}).Client(t, "")
	would, err := c.Tenants().Create(ctx, client.CreateTenantRequest{Name: "acme", ComputeConfig: json.RawMessage(appConfig)}, client.CreateOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(would.EffectiveConfig), "FROM_DEFAULTS") {
		t.Errorf("dry run effective_config = %s, want the defaults merged", would.EffectiveConfig)
	}
	_, err = c.Tenants().Get(ctx, "acme", client.GetOptions{})
	if !client.IsNotFound(err) {
		t.Errorf("after a dry run, get = %v, want not found", err)
	}
}

func TestCreateIdempotent(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{}).Client(t, "")
	req := client.CreateTenantRequest{Name: "acme", ComputeConfig: json.RawMessage(appConfig)}
	opts := client.CreateOptions{IdempotencyKey: "create-acme-1"}
	first, err := c.Tenants().Create(ctx, req, opts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Tenants().Create(ctx, req, opts)
	if err != nil {
		t.Fatalf("the same key again: %v", err)
	}
	if again.ID != first.ID {
		t.Errorf("replay created another tenant: %s, %s", first.ID, again.ID)
	}
	_, err = c.Tenants().Create(ctx, req, client.CreateOptions{})
	if !client.IsConflict(err) {
		t.Errorf("without the key: %v, want a conflict", err)
	}
	mustAPIError(t, err, http.StatusConflict, "name_taken")
}

func TestInvalidConfig(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{}).Client(t, "")
	_, err := c.Tenants().Create(ctx, client.CreateTenantRequest{
		Name:          "acme",
		ComputeConfig: json.RawMessage(`{"image":7,"bogus":true,"ports":[{"container_port":"80"}]}`),
	}, client.CreateOptions{})
	e := mustAPIError(t, err, http.StatusUnprocessableEntity, "invalid_compute_config")
	var pointers []string
	for _, f := range e.Problem.Errors {
		pointers = append(pointers, f.Pointer)
	}
	want := []string{"/compute_config/bogus", "/compute_config/image", "/compute_config/ports/0/container_port"}
	if diff := cmp.Diff(want, pointers); diff != "" {
		t.Errorf("pointers (-want +got):\n%s", diff)
	}
	msg := e.Error()
	if !strings.HasPrefix(msg, "compute_config is not valid for its provider (422 invalid_compute_config)\n") {
		t.Errorf("Error() = %q", msg)
	}
	for _, p := range want {
		if !strings.Contains(msg, "\n  "+p+": ") {
			t.Errorf("Error() does not name %s:\n%s", p, msg)
		}
	}
}

func TestParameterError(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{}).Client(t, "")
	_, err := c.Tenants().List(ctx, client.ListOptions{Statuses: []string{"sleeping"}})
	e := mustAPIError(t, err, http.StatusBadRequest, "invalid_parameter")
	if !strings.Contains(e.Error(), "\n  parameter status: must be one of") {
		t.Errorf("Error() = %q", e.Error())
	}
}

func TestNotFound(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{}).Client(t, "")
	calls := map[string]func() error{
		"get": func() error { _, err := c.Tenants().Get(ctx, "nobody", client.GetOptions{}); return err },
		"replace": func() error {
			_, err := c.Tenants().Replace(ctx, "nobody", client.ReplaceTenantRequest{ComputeConfig: json.RawMessage(appConfig)}, client.UpdateOptions{})
			return err
		},
		"patch": func() error {
			_, err := c.Tenants().Patch(ctx, "nobody", json.RawMessage(`{}`), client.UpdateOptions{})
			return err
		},
		"delete": func() error { _, err := c.Tenants().Delete(ctx, "nobody", client.DeleteOptions{}); return err },
		"events": func() error { _, err := c.Tenants().Events(ctx, "nobody", client.EventOptions{}); return err },
		"status": func() error { _, err := c.Tenants().Status(ctx, "nobody"); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			if !client.IsNotFound(err) || client.IsConflict(err) {
				t.Fatalf("%v, want not found", err)
			}
			mustAPIError(t, err, http.StatusNotFound, "tenant_not_found")
		})
	}
	t.Run("empty id", func(t *testing.T) {
		if _, err := c.Tenants().Get(ctx, "", client.GetOptions{}); err == nil || client.IsNotFound(err) {
			t.Errorf("Get(\"\") = %v", err)
		}
	})
}

func TestListAndAll(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{}).Client(t, "")
	var want []string
	for i := range 7 {
		tier := "silver"
		if i%2 == 0 {
			tier = "gold"
		}
		name := fmt.Sprintf("t%d", i)
		mustCreate(t, c, name, appConfig, map[string]string{"tier": tier})
		want = append(want, name)
	}
	page, err := c.Tenants().List(ctx, client.ListOptions{PageSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tenants) != 3 || page.NextPageToken == "" {
		t.Fatalf("first page: %d tenants, next %q", len(page.Tenants), page.NextPageToken)
	}

	names := func(opts client.ListOptions) []string {
		t.Helper()
		var out []string
		for tn, err := range c.Tenants().All(ctx, opts) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tn.Name)
		}
		slices.Sort(out)
		return out
	}
	if diff := cmp.Diff(want, names(client.ListOptions{PageSize: 2})); diff != "" {
		t.Errorf("All in pages of 2 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"t0", "t2", "t4", "t6"}, names(client.ListOptions{Labels: []string{"tier=gold"}, PageSize: 1})); diff != "" {
		t.Errorf("All tier=gold (-want +got):\n%s", diff)
	}
	if got := names(client.ListOptions{NamePrefix: "t3", Provider: "mock", Statuses: []string{"requested", "ready"}}); !slices.Equal(got, []string{"t3"}) {
		t.Errorf("prefix t3 = %v", got)
	}
	if got := names(client.ListOptions{Provider: "docker"}); len(got) != 0 {
		t.Errorf("provider docker = %v", got)
	}

	// Stopping early fetches no more pages; an error is yielded once.
	n := 0
	for range c.Tenants().All(ctx, client.ListOptions{PageSize: 2}) {
		if n++; n == 3 {
			break
		}
	}
	var errs int
	for _, err := range c.Tenants().All(ctx, client.ListOptions{PageToken: "bogus"}) {
		if err == nil {
			t.Fatal("a bogus page token listed tenants")
		}
		errs++
	}
	if errs != 1 {
		t.Errorf("%d errors yielded, want 1", errs)
	}
}

// TestChangeDryRun: Replace, ReplaceRaw and Patch with DryRun return the
// tenant as the change would make it and store nothing; a stale IfMatch
// and a config the provider refuses are the *Errors a change gets.
func TestChangeDryRun(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{}).Client(t, "")
	cur := mustCreate(t, c, "acme", appConfig, map[string]string{"tier": "gold"})
	dry := client.UpdateOptions{IfMatch: cur.Version, DryRun: true}
	for _, tc := range []struct {
		name   string
		change func() (*client.Tenant, error)
	}{
		{"Replace", func() (*client.Tenant, error) {
			return c.Tenants().Replace(ctx, "acme", client.ReplaceTenantRequest{ComputeConfig: json.RawMessage(`{"image":"example.com/app:2"}`)}, dry)
		}},
		{"ReplaceRaw", func() (*client.Tenant, error) {
			return c.Tenants().ReplaceRaw(ctx, "acme", json.RawMessage(`{"compute_config":{"image":"example.com/app:2"}}`), dry)
		}},
		{"Patch", func() (*client.Tenant, error) {
			return c.Tenants().Patch(ctx, "acme", json.RawMessage(`{"compute_config":{"image":"example.com/app:2"}}`), dry)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			would, err := tc.change()
			if err != nil {
				t.Fatal(err)
			}
			if would.Generation != cur.Generation+1 || !strings.Contains(string(would.ComputeConfig), "app:2") ||
				!strings.Contains(string(would.EffectiveConfig), "FROM_DEFAULTS") || would.ConfigLayers == nil {
				t.Errorf("dry run = %+v, want the tenant at the next generation with app:2, its effective_config and config_layers", would)
			}
			got, err := c.Tenants().Get(ctx, "acme", client.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != cur.Version || got.Generation != cur.Generation || strings.Contains(string(got.ComputeConfig), "app:2") {
				t.Errorf("after a dry run the tenant is at version %d, generation %d, with %s; want it as created", got.Version, got.Generation, got.ComputeConfig)
			}
		})
	}
	_, err := c.Tenants().Replace(ctx, "acme", client.ReplaceTenantRequest{ComputeConfig: json.RawMessage(appConfig)},
		client.UpdateOptions{IfMatch: cur.Version + 1, DryRun: true})
	if !client.IsPreconditionFailed(err) {
		t.Errorf("a dry run with a stale If-Match: %v, want 412", err)
	}
	_, err = c.Tenants().Replace(ctx, "acme", client.ReplaceTenantRequest{ComputeConfig: json.RawMessage(`{"image":5}`)}, client.UpdateOptions{DryRun: true})
	var refused *client.Error
	if !errors.As(err, &refused) || refused.Status != http.StatusUnprocessableEntity || len(refused.Problem.Errors) != 1 ||
		refused.Problem.Errors[0].Pointer != "/compute_config/image" {
		t.Errorf("a dry run of an invalid config: %v, want 422 at /compute_config/image", err)
	}
}

// TestDryRunRefusedWithoutOne: a change that has no dry run (a move, a
// subscription's update or rotation) asked for one is an error, and
// nothing is sent.
func TestDryRunRefusedWithoutOne(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{}).Client(t, "")
	mustCreate(t, c, "acme", appConfig, nil)
	dry := client.UpdateOptions{DryRun: true}
	for _, tc := range []struct {
		name, want string
		call       func() error
	}{
		{"move", "moves", func() error {
			_, err := c.Tenants().Move(ctx, "acme", client.MoveRequest{ComputeConfig: json.RawMessage(appConfig)}, dry)
			return err
		}},
		{"approve a move", "moves", func() error { _, err := c.Tenants().ApproveMove(ctx, "acme", "", dry); return err }},
		{"cancel a move", "moves", func() error { _, err := c.Tenants().CancelMove(ctx, "acme", "", dry); return err }},
		{"subscription update", "subscriptions", func() error {
			_, err := c.Subscriptions().Update(ctx, "billing", client.UpdateSubscriptionRequest{}, dry)
			return err
		}},
		{"secret rotation", "subscriptions", func() error {
			_, err := c.Subscriptions().RotateSecret(ctx, "billing", client.RotateSecretRequest{}, dry)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var answered *client.Error
			if err == nil || errors.As(err, &answered) || !strings.Contains(err.Error(), "dry run is not supported for "+tc.want) {
				t.Errorf("err = %v, want the client's refusal, the request not sent", err)
			}
		})
	}
	if got, err := c.Tenants().Get(ctx, "acme", client.GetOptions{}); err != nil || got.Version != 1 {
		t.Errorf("after refused dry runs the tenant is %+v, %v; want it as created", got, err)
	}
}

func TestReplacePatch(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{}).Client(t, "")
	cur := mustCreate(t, c, "acme", appConfig, map[string]string{"tier": "gold"})

	next, err := c.Tenants().Replace(ctx, "acme", client.ReplaceTenantRequest{
		ComputeConfig: json.RawMessage(`{"image":"example.com/app:2"}`),
		Labels:        map[string]string{"tier": "silver"},
	}, client.UpdateOptions{IfMatch: cur.Version})
	if err != nil {
		t.Fatal(err)
	}
	if next.Generation != 2 || next.Labels["tier"] != "silver" || !strings.Contains(string(next.ComputeConfig), "app:2") {
		t.Errorf("replaced: %+v", next)
	}
	_, err = c.Tenants().Replace(ctx, "acme", client.ReplaceTenantRequest{ComputeConfig: json.RawMessage(appConfig)}, client.UpdateOptions{IfMatch: cur.Version})
	if !client.IsPreconditionFailed(err) {
		t.Errorf("a stale If-Match: %v, want 412", err)
	}

	patched, err := c.Tenants().Patch(ctx, next.ID, json.RawMessage(`{"labels":{"team":"a"},"compute_config":{"env":{"X":"1"}}}`), client.UpdateOptions{IfMatch: next.Version})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"tier": "silver", "team": "a"}, patched.Labels); diff != "" {
		t.Errorf("patched labels (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(patched.ComputeConfig), "app:2") || !strings.Contains(string(patched.ComputeConfig), `"X":"1"`) {
		t.Errorf("patched config %s", patched.ComputeConfig)
	}
	_, err = c.Tenants().Patch(ctx, "acme", json.RawMessage(`{"name":"x"}`), client.UpdateOptions{})
	mustAPIError(t, err, http.StatusBadRequest, "invalid_body")
}

// Replace with nil labels keeps the tenant's; an empty map clears them.
func TestReplaceNilKeepsEmptyClears(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{}).Client(t, "")
	mustCreate(t, c, "acme", appConfig, map[string]string{"tier": "gold"})
	kept, err := c.Tenants().Replace(ctx, "acme", client.ReplaceTenantRequest{ComputeConfig: json.RawMessage(`{"image":"example.com/app:2"}`)}, client.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"tier": "gold"}, kept.Labels); diff != "" {
		t.Errorf("nil labels must keep the tenant's (-want +got):\n%s", diff)
	}
	cleared, err := c.Tenants().Replace(ctx, "acme", client.ReplaceTenantRequest{ComputeConfig: json.RawMessage(`{"image":"example.com/app:2"}`), Labels: map[string]string{}}, client.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cleared.Labels) != 0 {
		t.Errorf("an empty map must clear the labels: %v", cleared.Labels)
	}
}

func TestDeleteEvents(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{}).Client(t, "")
	cur := mustCreate(t, c, "acme", appConfig, nil)
	_, err := c.Tenants().Delete(ctx, "acme", client.DeleteOptions{IfMatch: cur.Version + 1})
	if !client.IsPreconditionFailed(err) {
		t.Errorf("delete with a wrong If-Match: %v", err)
	}
	deleting, err := c.Tenants().Delete(ctx, "acme", client.DeleteOptions{IfMatch: cur.Version})
	if err != nil {
		t.Fatal(err)
	}
	if deleting.Status != client.StatusDeleting {
		t.Errorf("deleted tenant is %s", deleting.Status)
	}
	_, err = c.Tenants().Replace(ctx, "acme", client.ReplaceTenantRequest{ComputeConfig: json.RawMessage(appConfig)}, client.UpdateOptions{})
	if !client.IsConflict(err) {
		t.Errorf("change a deleting tenant: %v, want a conflict", err)
	}

	page, err := c.Tenants().Events(ctx, "acme", client.EventOptions{PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 || page.NextPageToken == "" {
		t.Fatalf("first page of events: %+v", page)
	}
	var types []string
	for e, err := range c.Tenants().AllEvents(ctx, cur.ID, client.EventOptions{PageSize: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, e.Type)
	}
	if len(types) < 3 || types[0] != page.Events[0].Type || !slices.Contains(types, "delete_requested") {
		t.Errorf("events %v", types)
	}

	var newest []string
	for e, err := range c.Tenants().AllEvents(ctx, cur.ID, client.EventOptions{PageSize: 1, Newest: true}) {
		if err != nil {
			t.Fatal(err)
		}
		newest = append(newest, e.Type)
	}
	slices.Reverse(newest)
	if !slices.Equal(newest, types) {
		t.Errorf("newest first %v, want the reverse of %v", newest, types)
	}
	_, err = c.Tenants().Events(ctx, "acme", client.EventOptions{Newest: true, PageToken: page.NextPageToken})
	mustAPIError(t, err, http.StatusBadRequest, "invalid_parameter")
}

func TestStatusAndCompute(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{})
	c := srv.Client(t, "")
	mustCreate(t, c, "acme", appConfig, nil)
	_, err := c.Tenants().Status(ctx, "acme")
	mustAPIError(t, err, http.StatusNotFound, "workload_not_found")

	providers, err := c.Compute().Providers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mockCapabilities := map[string]bool{"health_checks": true, "in_place_update": true, "multiple_containers": true, "public_networking": true,
		"published_ports": true, "scaling": true, "secrets": true, "volumes": true}
	if diff := cmp.Diff(&client.ProviderList{Providers: []client.Provider{{Name: "mock", Default: true, Healthy: true, Capabilities: mockCapabilities}}}, providers); diff != "" {
		t.Errorf("providers (-want +got):\n%s", diff)
	}
	for _, name := range []string{"", "mock"} {
		cfg, err := c.Compute().Config(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Provider != "mock" || !json.Valid(cfg.Schema) || !strings.Contains(string(cfg.Defaults), "FROM_DEFAULTS") {
			t.Errorf("config of %q: %+v", name, cfg)
		}
	}
	_, err = c.Compute().Config(ctx, "nope")
	mustAPIError(t, err, http.StatusUnprocessableEntity, "provider_not_found")
}
