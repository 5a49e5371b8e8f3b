package providertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// testInterface: the name is usable and every result names its tenant.
func (s *suite) testInterface(t *testing.T) {
	if name := s.p.Name(); !provider.ValidName(name) {
		t.Errorf("Name() = %q, want lowercase alphanumeric", name)
	}
	if hc, ok := s.p.(provider.HealthChecker); ok {
		if err := hc.CheckHealth(context.Background()); err != nil {
			t.Errorf("CheckHealth() = %v, want nil: the suite needs a reachable platform", err)
		}
	}
}

// testSchema: the schema describes an object, the harness configs pass, and
// invalid configs fail with their pointers. (Registration in newSuite has
// already compiled the schema and checked the defaults.)
func (s *suite) testSchema(t *testing.T) {
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(s.p.ConfigSchema(), &schema); err != nil || schema.Type != "object" {
		t.Errorf("ConfigSchema() must describe a JSON object (\"type\": \"object\"), got %q", schema.Type)
	}
	tn := tenant{id: newID(), name: "conf-schema"}
	for v := range 2 {
		spec := s.spec(t, tn, v)
		if err := s.p.ValidateConfig(spec.ProviderConfig); err != nil {
			t.Errorf("ValidateConfig(variant %d) = %v, want nil", v, err)
		}
	}
	invalid := s.h.InvalidConfigs
	if _, workload := schema.Properties["ports"]; workload && schema.Properties["image"] != nil {
		invalid = append(invalid,
			InvalidConfig{Name: "workload: wrong type", Config: json.RawMessage(`{"image": 5}`), Pointer: "/image"},
			InvalidConfig{Name: "workload: nested wrong type", Config: json.RawMessage(`{"image": "a", "ports": [{"container_port": "x"}]}`), Pointer: "/ports/0/container_port"},
			InvalidConfig{Name: "workload: unknown field", Config: json.RawMessage(`{"image": "a", "bogus": 1}`), Pointer: "/bogus"},
		)
	}
	if len(invalid) == 0 {
		t.Error("harness: give InvalidConfigs the provider must refuse")
	}
	for _, bad := range invalid {
		t.Run(bad.Name, func(t *testing.T) {
			_, err := s.manager.Resolve(context.Background(), compute.ResolveRequest{TenantID: tn.id, TenantName: tn.name, ComputeConfig: bad.Config})
			if !errors.Is(err, provider.ErrInvalidSpec) {
				t.Fatalf("config %s was accepted or failed without ErrInvalidSpec: %v", bad.Config, err)
			}
			if provider.IsRetryable(err) {
				t.Errorf("an invalid config must be terminal: %v", err)
			}
			var pointers []string
			for _, v := range violation.Of(err) {
				pointers = append(pointers, v.Pointer)
			}
			if !slices.Contains(pointers, bad.Pointer) {
				t.Errorf("violations %v do not name %s: %v", pointers, bad.Pointer, err)
			}
		})
	}
}

// testValidate: valid specs pass, invalid ones fail with ErrInvalidSpec, and
// nothing is created either way.
func (s *suite) testValidate(t *testing.T) {
	tn := s.newTenant(t)
	good := s.spec(t, tn, 0)
	ctx := context.Background()
	if err := s.p.Validate(ctx, good); err != nil {
		t.Fatalf("Validate(valid spec) = %v", err)
	}
	cases := map[string]func(*provider.TenantComputeSpec) *provider.TenantComputeSpec{
		"nil spec":       func(*provider.TenantComputeSpec) *provider.TenantComputeSpec { return nil },
		"no tenant id":   func(sp *provider.TenantComputeSpec) *provider.TenantComputeSpec { sp.TenantID = ""; return sp },
		"other provider": func(sp *provider.TenantComputeSpec) *provider.TenantComputeSpec { sp.ProviderType = "other"; return sp },
		"provider config of the wrong shape": func(sp *provider.TenantComputeSpec) *provider.TenantComputeSpec {
			sp.ProviderConfig = json.RawMessage(`[]`)
			return sp
		},
		"provider config with an unknown field": func(sp *provider.TenantComputeSpec) *provider.TenantComputeSpec {
			sp.ProviderConfig = json.RawMessage(`{"landlord_conformance_unknown_field": true}`)
			return sp
		},
	}
	if len(good.Containers) > 0 {
		cases["no containers"] = func(sp *provider.TenantComputeSpec) *provider.TenantComputeSpec { sp.Containers = nil; return sp }
		cases["container without image"] = func(sp *provider.TenantComputeSpec) *provider.TenantComputeSpec {
			sp.Containers[0].Image = ""
			return sp
		}
		cases["container port out of range"] = func(sp *provider.TenantComputeSpec) *provider.TenantComputeSpec {
			sp.Containers[0].Ports = append(sp.Containers[0].Ports, workload.PortMapping{ContainerPort: 70000, Protocol: workload.ProtocolTCP})
			return sp
		}
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			err := s.p.Validate(ctx, mutate(good.Clone()))
			if !errors.Is(err, provider.ErrInvalidSpec) {
				t.Errorf("Validate = %v, want an error wrapping ErrInvalidSpec", err)
			}
			if err != nil && provider.IsRetryable(err) {
				t.Errorf("Validate error must be terminal: %v", err)
			}
		})
	}
	s.expectNotFound(t, tn.id, "after Validate")
}

// testUnknownTenant: status, update and destroy of a tenant that has nothing.
func (s *suite) testUnknownTenant(t *testing.T) {
	tn := s.newTenant(t)
	ctx := context.Background()
	s.expectNotFound(t, tn.id, "before anything")
	for i := range 2 {
		if err := s.p.Destroy(ctx, tn.id); err != nil {
			t.Fatalf("Destroy of an unknown tenant (call %d) = %v, want nil", i+1, err)
		}
	}
	if _, err := s.p.Update(ctx, tn.id, s.spec(t, tn, 0)); !errors.Is(err, provider.ErrTenantNotFound) {
		t.Errorf("Update of an unknown tenant = %v, want an error wrapping ErrTenantNotFound", err)
	}
	s.expectNotFound(t, tn.id, "after Destroy and Update of an unknown tenant")
}

// testLifecycle: provision (twice), update (same, new, same), destroy
// (twice), checking idempotency and that GetStatus follows.
func (s *suite) testLifecycle(t *testing.T) {
	tn := s.newTenant(t)
	v0, v1 := s.spec(t, tn, 0), s.spec(t, tn, 1)
	if v0.Hash() == v1.Hash() {
		t.Fatal("harness: config variants 0 and 1 are the same workload")
	}

	first := s.provision(t, v0)
	st := s.waitRunning(t, v0)
	s.noSecret(t, "Provision result", first)
	s.noSecret(t, "GetStatus", st)
	s.checkEndpoints(t, st)
	resources := -1
	if s.h.CountResources != nil {
		resources = s.h.CountResources(t, tn.id)
		if resources == 0 {
			t.Fatal("CountResources finds nothing for a provisioned tenant")
		}
	}

	again := s.provision(t, v0)
	if fmt.Sprint(again.ResourceIDs) != fmt.Sprint(first.ResourceIDs) {
		t.Errorf("Provision twice gave different resources: %v then %v", first.ResourceIDs, again.ResourceIDs)
	}
	s.waitRunning(t, v0)
	if resources >= 0 {
		s.expectResources(t, tn.id, resources, "after a second Provision")
	}

	if res := s.update(t, v0); !res.NoChanges() {
		t.Errorf("Update with the provisioned spec made changes: %v", res.Changes)
	}
	res := s.update(t, v1)
	if res.NoChanges() {
		t.Error("Update to a different spec reported no changes")
	}
	s.noSecret(t, "Update result", res)
	st = s.waitRunning(t, v1)
	s.noSecret(t, "GetStatus after Update", st)
	s.checkEndpoints(t, st)
	if res := s.update(t, v1); !res.NoChanges() {
		t.Errorf("repeating an Update made changes: %v", res.Changes)
	}
	if s.secret != "" {
		rotated := s.specWith(t, tn, 1, func(c map[string]any) {
			c["secrets"].(map[string]any)["LANDLORD_CONFORMANCE_SECRET"] = s.secret + "-rotated"
		})
		res := s.update(t, rotated)
		if res.NoChanges() {
			t.Error("Update that only rotates a secret reported no changes")
		}
		s.noSecret(t, "Update result of a secret rotation", res)
		if b, _ := json.Marshal(res); bytes.Contains(b, []byte("-rotated")) {
			t.Errorf("Update result reveals the rotated secret: %s", b)
		}
		s.waitRunning(t, rotated)
	}
	if resources >= 0 {
		s.expectResources(t, tn.id, resources, "after Update")
	}

	for i := range 2 {
		if err := s.p.Destroy(context.Background(), tn.id); err != nil {
			t.Fatalf("Destroy (call %d) = %v", i+1, err)
		}
		s.expectNotFound(t, tn.id, fmt.Sprintf("after Destroy call %d", i+1))
	}
}

// testProvisionCancelled: a cancelled Provision fails with the context's
// error and leaves nothing behind.
func (s *suite) testProvisionCancelled(t *testing.T) {
	tn := s.newTenant(t)
	spec := s.spec(t, tn, 0)
	res, err := s.p.Provision(cancelled(), spec)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Provision with a cancelled context = %v, %v; want an error wrapping context.Canceled", res, err)
	}
	if provider.IsTerminal(err) {
		t.Errorf("a cancelled Provision must be retryable: %v", err)
	}
	s.expectNotFound(t, tn.id, "after a cancelled Provision")
}

// testUpdateCancelled: a cancelled Update fails and the workload keeps
// running the previous spec.
func (s *suite) testUpdateCancelled(t *testing.T) {
	tn := s.newTenant(t)
	v0 := s.spec(t, tn, 0)
	s.provision(t, v0)
	s.waitRunning(t, v0)
	_, err := s.p.Update(cancelled(), tn.id, s.spec(t, tn, 1))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Update with a cancelled context = %v; want an error wrapping context.Canceled", err)
	}
	if provider.IsTerminal(err) {
		t.Errorf("a cancelled Update must be retryable: %v", err)
	}
	s.waitRunning(t, v0)
	if res := s.update(t, v0); !res.NoChanges() {
		t.Errorf("after a cancelled Update the workload differs from the previous spec: %v", res.Changes)
	}
}

// testDestroyCancelled: Destroy finishes even with a cancelled context.
func (s *suite) testDestroyCancelled(t *testing.T) {
	tn := s.newTenant(t)
	v0 := s.spec(t, tn, 0)
	s.provision(t, v0)
	s.waitRunning(t, v0)
	if err := s.p.Destroy(cancelled(), tn.id); err != nil {
		t.Fatalf("Destroy with a cancelled context = %v, want nil (cleanup must finish)", err)
	}
	s.expectNotFound(t, tn.id, "after Destroy with a cancelled context")
}

// testOutOfBand: GetStatus sees changes made behind the provider's back, and
// Provision repairs them without duplicating anything.
func (s *suite) testOutOfBand(t *testing.T) {
	if s.h.Disrupt == nil {
		t.Skip("the harness cannot change a workload behind the provider's back (Harness.Disrupt)")
	}
	tn := s.newTenant(t)
	v0 := s.spec(t, tn, 0)
	s.provision(t, v0)
	s.waitRunning(t, v0)
	resources := -1
	if s.h.CountResources != nil {
		resources = s.h.CountResources(t, tn.id)
	}
	s.h.Disrupt(t, tn.id)
	st, err := s.p.GetStatus(context.Background(), tn.id)
	switch {
	case errors.Is(err, provider.ErrTenantNotFound):
	case err != nil:
		t.Fatalf("GetStatus after a disruption: %v", err)
	case runs(st, v0):
		t.Fatalf("GetStatus does not see the disruption (cached?): %s", describe(st))
	}
	s.provision(t, v0)
	s.waitRunning(t, v0)
	if resources >= 0 {
		s.expectResources(t, tn.id, resources, "after Provision repaired a disruption")
	}
}

// testRestart: a new provider for the same platform finds the workload
// again, adopts it, and can update and destroy it.
func (s *suite) testRestart(t *testing.T) {
	if s.h.Restart == nil {
		t.Skip("the harness cannot restart the provider (Harness.Restart)")
	}
	tn := s.newTenant(t)
	v0, v1 := s.spec(t, tn, 0), s.spec(t, tn, 1)
	first := s.provision(t, v0)
	s.waitRunning(t, v0)
	resources := -1
	if s.h.CountResources != nil {
		resources = s.h.CountResources(t, tn.id)
	}

	restarted := &suite{h: s.h, p: s.h.Restart(t), manager: s.manager, secret: s.secret}
	restarted.waitRunning(t, v0)
	again := restarted.provision(t, v0)
	if fmt.Sprint(again.ResourceIDs) != fmt.Sprint(first.ResourceIDs) {
		t.Errorf("after a restart Provision gave different resources (duplicated?): %v then %v", first.ResourceIDs, again.ResourceIDs)
	}
	if resources >= 0 {
		restarted.expectResources(t, tn.id, resources, "after a restart and Provision")
	}
	if res := restarted.update(t, v0); !res.NoChanges() {
		t.Errorf("after a restart, Update with the running spec made changes: %v", res.Changes)
	}
	restarted.update(t, v1)
	restarted.waitRunning(t, v1)
	if err := restarted.p.Destroy(context.Background(), tn.id); err != nil {
		t.Fatalf("Destroy after a restart: %v", err)
	}
	restarted.expectNotFound(t, tn.id, "after a restart and Destroy")
}

// testConflict: a resource of the tenant's name that is not the tenant's
// is refused, terminally, with ErrProviderConflict, and survives the
// tenant's Destroy.
func (s *suite) testConflict(t *testing.T) {
	if s.h.Squat == nil {
		t.Skip("the harness cannot create a resource behind the provider's back (Harness.Squat)")
	}
	tn := s.newTenant(t)
	checkAndRemove := s.h.Squat(t, tn.name)
	checked := false
	t.Cleanup(func() {
		if !checked {
			checkAndRemove(t)
		}
	})
	spec := s.spec(t, tn, 0)
	for i := range 2 {
		_, err := s.p.Provision(context.Background(), spec)
		if !errors.Is(err, provider.ErrProviderConflict) {
			t.Fatalf("Provision (call %d) over a resource that is not the tenant's = %v; want an error wrapping ErrProviderConflict", i+1, err)
		}
		if provider.IsRetryable(err) {
			t.Errorf("a conflict must be terminal: %v", err)
		}
	}
	if err := s.p.Destroy(context.Background(), tn.id); err != nil {
		t.Fatalf("Destroy of a tenant whose name is taken: %v", err)
	}
	checked = true
	checkAndRemove(t)
	s.expectNotFound(t, tn.id, "after a conflict")
}

// testSameTenantConcurrently: racing Provisions of one tenant end with one
// workload.
func (s *suite) testSameTenantConcurrently(t *testing.T) {
	tn := s.newTenant(t)
	spec := s.spec(t, tn, 0)
	errs := make([]error, 8)
	parallelDo(len(errs), func(i int) {
		_, errs[i] = s.p.Provision(context.Background(), spec.Clone())
	})
	for i, err := range errs {
		if err != nil && provider.IsTerminal(err) {
			t.Errorf("racing Provision %d failed terminally: %v", i, err)
		}
	}
	s.provision(t, spec)
	s.waitRunning(t, spec)
	if s.h.CountResources != nil {
		// A fresh tenant provisioned once has as many resources as this one.
		ref := s.newTenant(t)
		refSpec := s.spec(t, ref, 0)
		s.provision(t, refSpec)
		s.waitRunning(t, refSpec)
		s.expectResources(t, tn.id, s.h.CountResources(t, ref.id), "after racing Provisions")
	}
}

// testParallelTenants: many tenants go through their whole life at once.
func (s *suite) testParallelTenants(t *testing.T) {
	n := s.h.parallel()
	tenants := make([]tenant, n)
	for i := range tenants {
		tenants[i] = s.newTenant(t)
	}
	failures := make([]error, n)
	parallelDo(n, func(i int) {
		failures[i] = s.lifecycleErr(tenants[i])
	})
	for i, err := range failures {
		if err != nil {
			t.Errorf("tenant %d (%s): %v", i, tenants[i].id, err)
		}
	}
}

// lifecycleErr is testLifecycle without t, for use off the test goroutine.
func (s *suite) lifecycleErr(tn tenant) error {
	ctx := context.Background()
	specs := make([]*provider.TenantComputeSpec, 2)
	for v := range specs {
		config, err := s.configErr(v)
		if err != nil {
			return err
		}
		res, err := s.manager.Resolve(ctx, compute.ResolveRequest{TenantID: tn.id, TenantName: tn.name, Generation: int64(v + 1), ComputeConfig: config})
		if err != nil {
			return fmt.Errorf("resolve: %w", err)
		}
		specs[v] = res.Spec
	}
	if _, err := s.p.Provision(ctx, specs[0]); err != nil {
		return fmt.Errorf("provision: %w", err)
	}
	if _, err := s.p.GetStatus(ctx, tn.id); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	res, err := s.p.Update(ctx, tn.id, specs[1])
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	if res.NoChanges() {
		return errors.New("update to a new spec reported no changes")
	}
	if err := s.p.Destroy(ctx, tn.id); err != nil {
		return fmt.Errorf("destroy: %w", err)
	}
	if _, err := s.p.GetStatus(ctx, tn.id); !errors.Is(err, provider.ErrTenantNotFound) {
		return fmt.Errorf("status after destroy = %v, want ErrTenantNotFound", err)
	}
	return nil
}

// testLogs: every line carries a tenant id and none holds a secret.
func (s *suite) testLogs(t *testing.T) {
	if s.h.Logs == nil {
		t.Skip("the harness does not capture the provider's logs (Harness.Logs)")
	}
	logs := s.h.Logs()
	if len(bytes.TrimSpace(logs)) == 0 {
		t.Fatal("the provider logged nothing while the suite ran")
	}
	if s.secret != "" && bytes.Contains(logs, []byte(s.secret)) {
		t.Error("the provider logged a secret value")
	}
	sc := bufio.NewScanner(bytes.NewReader(logs))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Errorf("log line is not JSON: %s", sc.Text())
			continue
		}
		if id, _ := line["tenant_id"].(string); id == "" {
			t.Errorf("log line without tenant_id: %s", sc.Text())
		}
	}
}
