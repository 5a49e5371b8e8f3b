package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// placedTenant is a valid tenant to create with two placements: web on
// mock and worker on docker.
func placedTenant(name string) *tenant.Tenant {
	in := newTenant(name)
	in.Provider, in.ComputeConfig = "", nil
	in.Placements = []tenant.Placement{
		{Name: "web", Provider: "mock", ComputeConfig: json.RawMessage(`{"image":"example.com/web:1","ports":[{"container_port":8080}]}`)},
		{Name: "worker", Provider: "docker", ComputeConfig: json.RawMessage(`{"image":"example.com/worker:1","env":{"QUEUE":"jobs"}}`)},
	}
	return in
}

// specs are the desired part of ps, as a DesiredChange declares it.
func specs(ps ...tenant.Placement) []tenant.PlacementSpec {
	out := make([]tenant.PlacementSpec, len(ps))
	for i, p := range ps {
		out[i] = tenant.PlacementSpec{Name: p.Name, Provider: p.Provider, ComputeConfig: p.ComputeConfig}
	}
	return out
}

// mustObservePlacement records status for placement name of cur, settling
// the generation when status does.
func mustObservePlacement(t *testing.T, s tenant.Store, cur *tenant.Tenant, name string, status tenant.Status) *tenant.Tenant {
	t.Helper()
	out, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: cur.Generation, Placement: name, Status: status, Settles: status.Settled(), Actor: "controller"})
	if err != nil {
		t.Fatalf("UpdateObserved(%s %s → %s): %v", name, cur.Placement(name).Status, status, err)
	}
	return out
}

// mustReadyPlacements takes every placement of cur through provisioning
// to ready.
func mustReadyPlacements(t *testing.T, s tenant.Store, cur *tenant.Tenant) *tenant.Tenant {
	t.Helper()
	for _, name := range cur.PlacementNames() {
		cur = mustObservePlacement(t, s, cur, name, tenant.StatusProvisioning)
		cur = mustObservePlacement(t, s, cur, name, tenant.StatusReady)
	}
	return cur
}

// mustDeletePlacements takes a tenant of several placements through
// deletion to deleted, a placement at a time.
func mustDeletePlacements(t *testing.T, s tenant.Store, cur *tenant.Tenant) *tenant.Tenant {
	t.Helper()
	cur, err := s.RequestDeletion(ctx, cur.ID, 0, "test")
	if err != nil {
		t.Fatalf("RequestDeletion: %v", err)
	}
	for _, name := range cur.PlacementNames() {
		cur = mustObservePlacement(t, s, cur, name, tenant.StatusDeleted)
	}
	if cur.Status != tenant.StatusDeleted {
		t.Fatalf("every placement deleted, the tenant is %s", cur.Status)
	}
	return cur
}

// sameAsStored fails t unless Get (with deleted tenants) and, for a live
// tenant, List read want as the store returned it.
func sameAsStored(t *testing.T, s tenant.Store, what string, want *tenant.Tenant) {
	t.Helper()
	got, err := s.Get(ctx, want.ID, tenant.GetOptions{IncludeDeleted: true})
	if err != nil {
		t.Fatalf("Get(%s) %s: %v", want.Name, what, err)
	}
	sameTenant(t, "Get "+what, got, want)
	if want.DeletedAt != nil {
		return
	}
	for _, tn := range listAll(t, s, tenant.ListOptions{NamePrefix: want.Name}) {
		if tn.ID == want.ID {
			sameTenant(t, "List "+what, tn, want)
			return
		}
	}
	t.Errorf("List %s: %s is not listed", what, want.Name)
}

// testPlacementsRoundTrip: a tenant created with placements is stored
// with every placement's desired state, and read back as created.
func testPlacementsRoundTrip(t *testing.T, s tenant.Store) {
	in := placedTenant("acme")
	created := mustCreate(t, s, in)
	if created.Simple() || len(created.Placements) != 2 {
		t.Fatalf("created %d placements (simple %v), want web and worker", len(created.Placements), created.Simple())
	}
	for i, p := range created.Placements {
		id, name := tenant.Workload(created.ID, created.Name, in.Placements[i].Name)
		if p.Name != in.Placements[i].Name || p.Provider != in.Placements[i].Provider || !sameJSON(p.ComputeConfig, in.Placements[i].ComputeConfig) ||
			p.WorkloadID != id || p.WorkloadName != name || p.Removed || p.Status != tenant.StatusRequested || !p.StatusChangedAt.Equal(created.CreatedAt) {
			t.Errorf("placement %d = %+v, want %s on %s with workload %s (%s), requested", i, p, in.Placements[i].Name, in.Placements[i].Provider, id, name)
		}
	}
	// The tenant's fields are the first placement's.
	if created.Provider != "mock" || !sameJSON(created.ComputeConfig, in.Placements[0].ComputeConfig) {
		t.Errorf("tenant provider %s, config %s; want the first placement's", created.Provider, created.ComputeConfig)
	}
	sameAsStored(t, s, "after Create", created)
	sameTenant(t, "Get by name", mustGet(t, s, "acme"), created)
}

// testPlacementObservations: an observation of one placement changes that
// placement's observed state, every field of it stored, and the tenant's
// summary (ready once every placement is); status changes of a placement
// are its events, which ListEvents finds by placement, a page at a time.
func testPlacementObservations(t *testing.T, s tenant.Store) {
	cur := mustCreate(t, s, placedTenant("acme"))
	other := mustCreate(t, s, placedTenant("other"))
	retry := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	obs := tenant.Observation{
		Generation: 1, Placement: "web", Status: tenant.StatusProvisioning, Message: "pulling", Attempts: 2, RetryAt: &retry,
		ResourceIDs: map[string]string{"container/web": "c-web"},
		Endpoints:   []provider.Endpoint{{Container: "app", Name: "http", ContainerPort: 8080, Protocol: "tcp", Address: "127.0.0.1:30001"}},
		Actor:       "controller",
	}
	web, err := s.UpdateObserved(ctx, cur.ID, obs)
	if err != nil {
		t.Fatal(err)
	}
	w, worker := web.Placement("web"), web.Placement("worker")
	if w.Status != tenant.StatusProvisioning || w.StatusMessage != "pulling" || w.Attempts != 2 || w.RetryAt == nil || !w.RetryAt.Equal(retry) ||
		w.ResourceIDs["container/web"] != "c-web" || len(w.Endpoints) != 1 {
		t.Errorf("observed placement web = %+v", w)
	}
	if worker.Status != tenant.StatusRequested || worker.ResourceIDs != nil || worker.Endpoints != nil || worker.Attempts != 0 {
		t.Errorf("an observation of web changed worker: %+v", worker)
	}
	if web.Status != tenant.StatusProvisioning || web.StatusMessage != "web: pulling" || web.ObservedGeneration != 0 || web.ResourceIDs["container/web"] != "c-web" || len(web.Endpoints) != 1 {
		t.Errorf("tenant after web's observation: status %s %q, observed %d, ids %v, endpoints %v", web.Status, web.StatusMessage, web.ObservedGeneration, web.ResourceIDs, web.Endpoints)
	}
	sameAsStored(t, s, "after an observation of web", web)

	ready := mustObservePlacement(t, s, web, "web", tenant.StatusReady)
	if ready.Status != tenant.StatusProvisioning || ready.ObservedGeneration != 0 || ready.Placement("web").ObservedGeneration != 1 {
		t.Errorf("web ready, worker requested: tenant %s observed %d; want provisioning, 0", ready.Status, ready.ObservedGeneration)
	}
	mustObservePlacement(t, s, ready, "worker", tenant.StatusProvisioning)
	drift := &tenant.DriftReport{
		DetectedAt: time.Date(2026, 11, 27, 10, 0, 0, 123456000, time.UTC), Generation: 1, Policy: provider.DriftObserve,
		Differences: []provider.Drift{{Path: "deployment/replicas", Kind: provider.DriftScale, Expected: "1", Found: "5"}},
	}
	ready, err = s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 1, Placement: "worker", Status: tenant.StatusReady, Settles: true, Drift: drift,
		ResourceIDs: map[string]string{"container/worker": "c-worker"}, Actor: "controller"})
	if err != nil {
		t.Fatal(err)
	}
	if ready.Status != tenant.StatusReady || ready.ObservedGeneration != 1 || ready.StatusMessage != "" {
		t.Errorf("both placements ready: tenant %s %q, observed %d; want ready, 1", ready.Status, ready.StatusMessage, ready.ObservedGeneration)
	}
	if d := ready.Placement("worker").Drift; d == nil || !d.Same(drift) || ready.Placement("web").Drift != nil || ready.Drift != nil {
		t.Errorf("worker's drift = %+v, web's %+v, the tenant's %+v; want worker's alone", d, ready.Placement("web").Drift, ready.Drift)
	}
	sameAsStored(t, s, "with both placements ready", ready)
	if got := mustGet(t, s, other.ID); got.Status != tenant.StatusRequested || got.Placement("web").Status != tenant.StatusRequested {
		t.Errorf("observations of acme changed other: %+v", got)
	}

	// An observation names its placement, one the tenant has.
	_, err = s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 1, Status: tenant.StatusReady})
	wantErr(t, "UpdateObserved of no placement", err, tenant.ErrInvalid)
	_, err = s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 1, Placement: "cron", Status: tenant.StatusReady})
	wantErr(t, "UpdateObserved of an unknown placement", err, tenant.ErrConflict)

	if err := s.AppendEvent(ctx, tenant.Event{TenantID: cur.ID, Placement: "web", Type: tenant.EventNote, Message: "web note", Actor: "controller"}); err != nil {
		t.Fatal(err)
	}
	summary := func(evs []tenant.Event) []string {
		out := make([]string, len(evs))
		for i, e := range evs {
			out[i] = fmt.Sprintf("%s: %s %s→%s", e.Placement, e.Type, e.From, e.To)
		}
		return out
	}
	want := []string{
		": created →requested",
		"web: status requested→provisioning",
		": status requested→provisioning",
		"web: status provisioning→ready",
		"worker: status requested→provisioning",
		"worker: drift_detected →",
		"worker: status provisioning→ready",
		": status provisioning→ready",
		"web: note →",
	}
	if diff := cmp.Diff(want, summary(mustEvents(t, s, cur.ID))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		placement string
		newest    bool
		want      []string
	}{
		{"web", false, []string{"web: status requested→provisioning", "web: status provisioning→ready", "web: note →"}},
		{"web", true, []string{"web: note →", "web: status provisioning→ready", "web: status requested→provisioning"}},
		{"worker", false, []string{"worker: status requested→provisioning", "worker: drift_detected →", "worker: status provisioning→ready"}},
		{"cron", false, nil},
	} {
		t.Run(fmt.Sprintf("events of %s newest %v", tt.placement, tt.newest), func(t *testing.T) {
			var got []tenant.Event
			opts := tenant.EventListOptions{PageSize: 1, Newest: tt.newest, Placement: tt.placement}
			for range 10 {
				page, err := s.ListEvents(ctx, cur.ID, opts)
				if err != nil {
					t.Fatal(err)
				}
				if len(page.Events) > 1 {
					t.Fatalf("page of %d events, asked for 1", len(page.Events))
				}
				got = append(got, page.Events...)
				if page.NextPageToken == "" {
					break
				}
				opts.PageToken = page.NextPageToken
			}
			if diff := cmp.Diff(tt.want, summary(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
	_, err = s.ListEvents(ctx, tenant.NewID(), tenant.EventListOptions{Placement: "web"})
	wantErr(t, "ListEvents of a placement of an unknown tenant", err, tenant.ErrNotFound)
}

// testPlacementChanges: UpdateDesired adds placements and removes others,
// which stay, removed, until their workloads are deleted, the first one
// too (the tenant then runs where its new first placement does); and a
// tenant of several placements is deleted a placement at a time.
func testPlacementChanges(t *testing.T, s tenant.Store) {
	cur := mustReadyPlacements(t, s, mustCreate(t, s, placedTenant("acme")))
	web := *cur.Placement("web")
	web.ComputeConfig = json.RawMessage(`{"image":"example.com/web:2"}`)
	cron := tenant.Placement{Name: "cron", Provider: "nomad", ComputeConfig: json.RawMessage(`{"image":"example.com/cron:1"}`)}
	changed, err := s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, Placements: specs(web, cron), Labels: cur.Labels, Annotations: cur.Annotations, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if got := changed.PlacementNames(); len(got) != 3 || got[0] != "web" || got[1] != "worker" || got[2] != "cron" {
		t.Fatalf("placements after the change = %v, want web, worker (removed), cron", got)
	}
	if !changed.Placement("worker").Removed || changed.Placement("web").Removed || changed.Placement("cron").Removed ||
		changed.Placement("cron").Status != tenant.StatusRequested || !sameJSON(changed.Placement("web").ComputeConfig, web.ComputeConfig) ||
		changed.Generation != 2 || changed.Version != cur.Version+1 {
		t.Errorf("after the change: %+v", changed)
	}
	sameAsStored(t, s, "after adding cron and removing worker", changed)

	// The removed placement is destroyed, and goes.
	gone := mustObservePlacement(t, s, changed, "worker", tenant.StatusDeleting)
	if !gone.Placement("worker").Removed || gone.Placement("worker").Status != tenant.StatusDeleting {
		t.Errorf("worker being deleted: %+v", gone.Placement("worker"))
	}
	sameAsStored(t, s, "with worker being deleted", gone)
	gone = mustObservePlacement(t, s, gone, "worker", tenant.StatusDeleted)
	if got := gone.PlacementNames(); len(got) != 2 || got[0] != "web" || got[1] != "cron" {
		t.Fatalf("placements once worker is deleted = %v, want web and cron", got)
	}
	sameAsStored(t, s, "once worker is deleted", gone)
	if _, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: gone.Generation, Placement: "worker", Status: tenant.StatusDeleted}); err == nil {
		t.Error("an observation of a placement that is gone was recorded")
	}

	// The first placement goes too: the tenant is cron's, on nomad.
	first, err := s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: gone.Version, Placements: specs(cron), Labels: cur.Labels, Annotations: cur.Annotations, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	first = mustObservePlacement(t, s, first, "web", tenant.StatusDeleting)
	first = mustObservePlacement(t, s, first, "web", tenant.StatusDeleted)
	if got := first.PlacementNames(); len(got) != 1 || got[0] != "cron" || first.Provider != "nomad" || !sameJSON(first.ComputeConfig, cron.ComputeConfig) || first.Simple() {
		t.Fatalf("after web's removal: placements %v, provider %s, config %s; want cron's alone", got, first.Provider, first.ComputeConfig)
	}
	sameAsStored(t, s, "once the first placement is deleted", first)
	if got := names(listAll(t, s, tenant.ListOptions{Provider: "nomad"})); len(got) != 1 || got[0] != "acme" {
		t.Errorf("List of nomad's tenants = %v, want acme", got)
	}
	if got := names(listAll(t, s, tenant.ListOptions{Provider: "mock"})); len(got) != 0 {
		t.Errorf("List of mock's tenants = %v, want none: web is gone", got)
	}

	// A tenant of several placements is deleted once every one is.
	deleted := mustDeletePlacements(t, s, mustReadyPlacements(t, s, mustCreate(t, s, placedTenant("beta"))))
	sameAsStored(t, s, "deleted", deleted)
	mustCreate(t, s, placedTenant("beta")) // the name is free again
}

// testPlacementProviders: List by provider finds the tenants any of whose
// placements run on it, first or not, with the other filters and in pages;
// CountByProvider counts a tenant once under each of its providers.
func testPlacementProviders(t *testing.T, s tenant.Store) {
	simple := func(name, provider string) *tenant.Tenant {
		in := newTenant(name)
		in.Provider = provider
		return mustCreate(t, s, in)
	}
	placed := func(name string, providers ...string) *tenant.Tenant {
		in := newTenant(name)
		in.Provider, in.ComputeConfig = "", nil
		for i, p := range providers {
			in.Placements = append(in.Placements, tenant.Placement{Name: fmt.Sprintf("p%d", i), Provider: p, ComputeConfig: json.RawMessage(`{"image":"a"}`)})
		}
		return mustCreate(t, s, in)
	}
	simple("a-mock", "mock")
	placed("b-mock-docker", "mock", "docker")
	simple("c-docker", "docker")
	placed("d-nomad-docker-docker", "nomad", "docker", "docker")
	ready := mustReadyPlacements(t, s, placed("e-docker-nomad", "docker", "nomad"))
	mustDeletePlacements(t, s, placed("f-deleted", "nomad", "mock"))
	placed("g-nomad-mock", "nomad", "mock")
	if ready.Status != tenant.StatusReady {
		t.Fatalf("e-docker-nomad is %s, want ready", ready.Status)
	}

	tests := []struct {
		name string
		opts tenant.ListOptions
		want []string
	}{
		{"mock", tenant.ListOptions{Provider: "mock"}, []string{"a-mock", "b-mock-docker", "g-nomad-mock"}},
		{"docker", tenant.ListOptions{Provider: "docker"}, []string{"b-mock-docker", "c-docker", "d-nomad-docker-docker", "e-docker-nomad"}},
		{"nomad", tenant.ListOptions{Provider: "nomad"}, []string{"d-nomad-docker-docker", "e-docker-nomad", "g-nomad-mock"}},
		{"nomad with deleted", tenant.ListOptions{Provider: "nomad", IncludeDeleted: true}, []string{"d-nomad-docker-docker", "e-docker-nomad", "f-deleted", "g-nomad-mock"}},
		{"nomad, ready", tenant.ListOptions{Provider: "nomad", Statuses: []tenant.Status{tenant.StatusReady}}, []string{"e-docker-nomad"}},
		{"docker, by name", tenant.ListOptions{Provider: "docker", NamePrefix: "d-"}, []string{"d-nomad-docker-docker"}},
		{"mock, by label", tenant.ListOptions{Provider: "mock", Labels: map[string]string{"tier": "gold"}}, []string{"a-mock", "b-mock-docker", "g-nomad-mock"}},
		{"mock, by another label", tenant.ListOptions{Provider: "mock", Labels: map[string]string{"tier": "silver"}}, nil},
		{"none", tenant.ListOptions{Provider: "kubernetes"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range []int{0, 1, 2} {
				opts := tt.opts
				opts.PageSize = size
				if diff := cmp.Diff(tt.want, names(listAll(t, s, opts)), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("page size %d (-want +got):\n%s", size, diff)
				}
			}
		})
	}

	c, ok := s.(tenant.ProviderCounter)
	if !ok {
		t.Fatalf("%T does not implement tenant.ProviderCounter", s)
	}
	got, err := c.CountByProvider(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"mock": 3, "docker": 4, "nomad": 3}, got); diff != "" {
		t.Errorf("CountByProvider (-want +got):\n%s", diff)
	}
}
