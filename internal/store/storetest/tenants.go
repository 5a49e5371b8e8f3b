package storetest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

func testCreateAndGet(t *testing.T, s tenant.Store) {
	before := time.Now().Add(-time.Second)
	created := mustCreate(t, s, newTenant("acme"))
	if !tenant.IsID(created.ID) || created.ID[14] != '7' {
		t.Errorf("id %q is not a version 7 UUID", created.ID)
	}
	if created.Status != tenant.StatusRequested || created.Generation != 1 || created.Version != 1 || created.ObservedGeneration != 0 {
		t.Errorf("new tenant: status %s, generation %d, version %d, observed %d; want requested, 1, 1, 0",
			created.Status, created.Generation, created.Version, created.ObservedGeneration)
	}
	if created.CreatedAt.Before(before) || !created.UpdatedAt.Equal(created.CreatedAt) || created.CreatedAt.Location() != time.UTC {
		t.Errorf("timestamps: created %v, updated %v", created.CreatedAt, created.UpdatedAt)
	}
	if created.DeletedAt != nil || created.DeletionRequestedAt != nil {
		t.Error("a new tenant is not deleted")
	}
	sameTenant(t, "Get by id", mustGet(t, s, created.ID), created)
	sameTenant(t, "Get by name", mustGet(t, s, "acme"), created)

	// The caller may choose the id; one already used is a conflict.
	chosen := newTenant("chosen")
	chosen.ID = tenant.NewID()
	if got := mustCreate(t, s, chosen); got.ID != chosen.ID {
		t.Errorf("Create with id %s stored id %s", chosen.ID, got.ID)
	}
	again := newTenant("other-name")
	again.ID = chosen.ID
	_, err := s.Create(ctx, again, "test")
	wantErr(t, "Create with a used id", err, tenant.ErrConflict)
	bad := newTenant("bad-id")
	bad.ID = "not-a-uuid"
	_, err = s.Create(ctx, bad, "test")
	wantErr(t, "Create with a malformed id", err, tenant.ErrInvalid)

	events := mustEvents(t, s, created.ID)
	if len(events) != 1 || events[0].Type != tenant.EventCreated || events[0].To != tenant.StatusRequested || events[0].Actor != "test" || events[0].Generation != 1 {
		t.Errorf("events after create = %+v, want one created event by test", events)
	}
}

func testLoneSurrogate(t *testing.T, s tenant.Store) {
	in := newTenant("surrogate")
	in.ComputeConfig = json.RawMessage(`{"image":"a","x-note":"\ud800 <&>"}`)
	created := mustCreate(t, s, in)
	got := mustGet(t, s, created.ID)
	if !sameJSON(got.ComputeConfig, []byte(`{"image":"a","x-note":"\ufffd <&>"}`)) {
		t.Errorf("a lone surrogate is stored as %s, want U+FFFD", got.ComputeConfig)
	}
}

func testJSONFidelity(t *testing.T, s tenant.Store) {
	config := `{
		"image": "example.com/app@sha256:0123",
		"big": 12345678901234567890123,
		"precise": 0.1000000000000000055511151231257827,
		"negative": -42, "zero": 0, "float": 1.5e10, "bool": true, "null": null,
		"nested": {"a": {"b": {"c": [1, [2, [3, {"d": "deep"}]]]}}, "empty": {}, "list": []},
		"unicode": "ünïcödé ✓ 日本語 🚀 \u00e9 \u2028 \"quoted\" back\\slash",
		"ключ": "значение"
	}`
	in := newTenant("fidelity")
	in.ComputeConfig = json.RawMessage(config)
	in.Labels = map[string]string{"example.com/team": "a.b_c-d"}
	in.Annotations = map[string]string{"note": "multi\nline ✓ 🚀", "empty": ""}
	created := mustCreate(t, s, in)
	for _, got := range []*tenant.Tenant{created, mustGet(t, s, created.ID)} {
		if !sameJSON(got.ComputeConfig, []byte(config)) {
			t.Errorf("compute_config changed:\n got  %s\n want %s", got.ComputeConfig, config)
		}
		if got.Annotations["note"] != in.Annotations["note"] || got.Labels["example.com/team"] != "a.b_c-d" {
			t.Errorf("labels or annotations changed: %v %v", got.Labels, got.Annotations)
		}
		if v, ok := got.Annotations["empty"]; !ok || v != "" {
			t.Errorf("an empty annotation value was lost: %v", got.Annotations)
		}
	}
	obs := tenant.Observation{
		Generation: 1, Status: tenant.StatusProvisioning,
		ResourceIDs: map[string]string{"container/app": "3f2a", "network": "net-ü"},
		Endpoints:   []provider.Endpoint{{Container: "app", Name: "http", ContainerPort: 8080, Protocol: "tcp", Address: "127.0.0.1:30001"}},
	}
	updated, err := s.UpdateObserved(ctx, created.ID, obs)
	if err != nil {
		t.Fatal(err)
	}
	sameTenant(t, "Get after UpdateObserved", mustGet(t, s, created.ID), updated)
	if updated.ResourceIDs["network"] != "net-ü" || len(updated.Endpoints) != 1 || updated.Endpoints[0] != obs.Endpoints[0] {
		t.Errorf("observed state changed: %v %v", updated.ResourceIDs, updated.Endpoints)
	}
}

func testCreateRefusesInvalid(t *testing.T, s tenant.Store) {
	tests := map[string]func(*tenant.Tenant){
		"empty name":            func(in *tenant.Tenant) { in.Name = "" },
		"upper case name":       func(in *tenant.Tenant) { in.Name = "Acme" },
		"name too long":         func(in *tenant.Tenant) { in.Name = strings.Repeat("a", 64) },
		"name ends with a dash": func(in *tenant.Tenant) { in.Name = "acme-" },
		"name is a uuid":        func(in *tenant.Tenant) { in.Name = "0192f0c4-1d2e-7000-8000-000000000001" },
		"no provider":           func(in *tenant.Tenant) { in.Provider = "" },
		"config not an object":  func(in *tenant.Tenant) { in.ComputeConfig = json.RawMessage(`[1]`) },
		"config malformed":      func(in *tenant.Tenant) { in.ComputeConfig = json.RawMessage(`{"a":`) },
		"config with NUL":       func(in *tenant.Tenant) { in.ComputeConfig = json.RawMessage(`{"a":"x\u0000y"}`) },
		"bad label key":         func(in *tenant.Tenant) { in.Labels = map[string]string{"bad key": "v"} },
		"bad label value":       func(in *tenant.Tenant) { in.Labels = map[string]string{"k": "has space"} },
		"annotation with NUL":   func(in *tenant.Tenant) { in.Annotations = map[string]string{"k": "a\x00b"} },
		"config not UTF-8":      func(in *tenant.Tenant) { in.ComputeConfig = json.RawMessage("{\"a\":\"\xff\"}") },
		"annotation not UTF-8":  func(in *tenant.Tenant) { in.Annotations = map[string]string{"k": "\xff"} },
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			in := newTenant("valid")
			mutate(in)
			_, err := s.Create(ctx, in, "test")
			wantErr(t, "Create", err, tenant.ErrInvalid)
			if len(violation.Of(err)) == 0 {
				t.Errorf("error %v names no field", err)
			}
		})
	}
	if got := listAll(t, s, tenant.ListOptions{IncludeDeleted: true}); len(got) != 0 {
		t.Errorf("invalid creates stored %d tenants", len(got))
	}
}

func testNameTaken(t *testing.T, s tenant.Store) {
	first := mustCreate(t, s, newTenant("acme"))
	_, err := s.Create(ctx, newTenant("acme"), "test")
	wantErr(t, "second Create", err, tenant.ErrNameTaken)
	if !strings.Contains(err.Error(), "acme") {
		t.Errorf("error %q does not name the tenant", err)
	}
	// Deleting (not yet deleted) still holds the name.
	if _, err := s.RequestDeletion(ctx, first.ID, 0, "test"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Create(ctx, newTenant("acme"), "test")
	wantErr(t, "Create while the holder is deleting", err, tenant.ErrNameTaken)
}

func testNameReuseAfterDelete(t *testing.T, s tenant.Store) {
	first := mustCreate(t, s, newTenant("acme"))
	firstDeleted := mustDelete(t, s, first)
	if firstDeleted.DeletedAt == nil || firstDeleted.Status != tenant.StatusDeleted {
		t.Fatalf("deleted tenant: %+v", firstDeleted)
	}
	second := mustCreate(t, s, newTenant("acme"))
	if second.ID == first.ID {
		t.Fatal("a reused name got the old id")
	}
	sameTenant(t, "Get(name) after reuse", mustGet(t, s, "acme"), second)
	got, err := s.Get(ctx, "acme", tenant.GetOptions{IncludeDeleted: true})
	if err != nil || got.ID != second.ID {
		t.Errorf("Get(name, IncludeDeleted) = %v, %v; want the live tenant", got, err)
	}
	_, err = s.Get(ctx, first.ID, tenant.GetOptions{})
	wantErr(t, "Get(deleted id)", err, tenant.ErrNotFound)
	old, err := s.Get(ctx, first.ID, tenant.GetOptions{IncludeDeleted: true})
	if err != nil {
		t.Fatal(err)
	}
	sameTenant(t, "Get(deleted id, IncludeDeleted)", old, firstDeleted)

	secondDeleted := mustDelete(t, s, second)
	got, err = s.Get(ctx, "acme", tenant.GetOptions{IncludeDeleted: true})
	if err != nil || got.ID != secondDeleted.ID {
		t.Errorf("Get(name, IncludeDeleted) with no live tenant = %v, %v; want the most recently deleted", got, err)
	}
	if len(mustEvents(t, s, first.ID)) == 0 {
		t.Error("a deleted tenant lost its history")
	}
}

func testGetNotFound(t *testing.T, s tenant.Store) {
	mustCreate(t, s, newTenant("acme"))
	for _, key := range []string{tenant.NewID(), "nobody", "ACME", ""} {
		_, err := s.Get(ctx, key, tenant.GetOptions{IncludeDeleted: true})
		wantErr(t, "Get("+key+")", err, tenant.ErrNotFound)
	}
}

func testUpdateDesired(t *testing.T, s tenant.Store) {
	cur := mustCreate(t, s, newTenant("acme"))
	change := tenant.DesiredChange{
		Version:       cur.Version,
		ComputeConfig: json.RawMessage(`{"image":"example.com/app:2"}`),
		Labels:        map[string]string{"tier": "silver"},
		Actor:         "alice",
		Message:       "bump image",
	}
	_, err := s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version + 1, ComputeConfig: change.ComputeConfig})
	wantErr(t, "UpdateDesired with a stale version", err, tenant.ErrConflict)

	next, err := s.UpdateDesired(ctx, cur.ID, change)
	if err != nil {
		t.Fatal(err)
	}
	if next.Generation != 2 || next.Version != 2 || next.Labels["tier"] != "silver" || next.Annotations != nil {
		t.Errorf("after UpdateDesired: generation %d, version %d, labels %v, annotations %v", next.Generation, next.Version, next.Labels, next.Annotations)
	}
	if next.Status != cur.Status || !next.UpdatedAt.After(cur.UpdatedAt) && !next.UpdatedAt.Equal(cur.UpdatedAt) {
		t.Errorf("UpdateDesired changed the status or moved time back: %+v", next)
	}
	sameTenant(t, "Get after UpdateDesired", mustGet(t, s, cur.ID), next)

	// The same desired state, written differently, changes nothing.
	same := change
	same.Version = next.Version
	same.ComputeConfig = json.RawMessage("{ \"image\" : \"example.com/app:2\" }")
	numbers, err := s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: next.Version, ComputeConfig: json.RawMessage(`{"image":"example.com/app:2","n":1e2}`), Labels: change.Labels})
	if err != nil {
		t.Fatal(err)
	}
	respelled, err := s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: numbers.Version, ComputeConfig: json.RawMessage(`{"n":100.0,"image":"example.com/app:2"}`), Labels: change.Labels})
	if err != nil || respelled.Version != numbers.Version {
		t.Errorf("respelling a number (1e2 → 100.0) counted as a change: version %d → %d, %v", numbers.Version, respelled.Version, err)
	}
	next, err = s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: numbers.Version, ComputeConfig: change.ComputeConfig, Labels: change.Labels})
	if err != nil {
		t.Fatal(err)
	}
	same.Version = next.Version
	again, err := s.UpdateDesired(ctx, cur.ID, same)
	if err != nil {
		t.Fatal(err)
	}
	if again.Generation != next.Generation || again.Version != next.Version {
		t.Errorf("a change that alters nothing bumped generation %d → %d, version %d → %d", next.Generation, again.Generation, next.Version, again.Version)
	}

	// An invalid change is refused and nothing is written.
	_, err = s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: next.Version, ComputeConfig: json.RawMessage(`"x"`)})
	wantErr(t, "invalid UpdateDesired", err, tenant.ErrInvalid)
	sameTenant(t, "Get after a refused UpdateDesired", mustGet(t, s, cur.ID), next)

	_, err = s.UpdateDesired(ctx, tenant.NewID(), change)
	wantErr(t, "UpdateDesired of an unknown tenant", err, tenant.ErrNotFound)

	events := mustEvents(t, s, cur.ID)
	if len(events) != 4 || events[1].Type != tenant.EventUpdated || events[1].Actor != "alice" || events[1].Message != "bump image" || events[1].Generation != 2 {
		t.Errorf("events = %+v, want created, then updated by alice, then two more updates", events)
	}
}

func testObservedNeverClobbersDesired(t *testing.T, s tenant.Store) {
	cur := mustCreate(t, s, newTenant("acme"))
	newer, err := s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: json.RawMessage(`{"image":"example.com/app:2"}`)})
	if err != nil {
		t.Fatal(err)
	}
	// The controller finishes generation 1 after generation 2 was written.
	_, err = s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning})
	wantErr(t, "UpdateObserved for a stale generation", err, tenant.ErrConflict)
	sameTenant(t, "Get after a stale observation", mustGet(t, s, cur.ID), newer)

	prov := mustObserve(t, s, newer, tenant.StatusProvisioning)
	if prov.ObservedGeneration != 0 || prov.Version != newer.Version || prov.Generation != newer.Generation {
		t.Errorf("provisioning: observed %d, version %d, generation %d; want 0, %d, %d", prov.ObservedGeneration, prov.Version, prov.Generation, newer.Version, newer.Generation)
	}
	if !sameJSON(prov.ComputeConfig, newer.ComputeConfig) {
		t.Error("UpdateObserved changed the desired config")
	}
	ready, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{
		Generation: 2, Status: tenant.StatusReady, Settles: true, Message: "running",
		ResourceIDs: map[string]string{"container/app": "abc"}, Actor: "controller",
	})
	if err != nil {
		t.Fatal(err)
	}
	if ready.ObservedGeneration != 2 || ready.StatusMessage != "running" || ready.ResourceIDs["container/app"] != "abc" {
		t.Errorf("ready: %+v", ready)
	}
	// A desired write based on the version read before the observations
	// still succeeds: observations do not change the version.
	if _, err := s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: newer.Version, ComputeConfig: json.RawMessage(`{"image":"example.com/app:3"}`)}); err != nil {
		t.Errorf("UpdateDesired after observations: %v", err)
	}
	var transitions []string
	for _, e := range mustEvents(t, s, cur.ID) {
		if e.Type == tenant.EventStatus {
			transitions = append(transitions, string(e.From)+"→"+string(e.To))
		}
	}
	if strings.Join(transitions, " ") != "requested→provisioning provisioning→ready" {
		t.Errorf("status events = %v", transitions)
	}
}

func testTransitions(t *testing.T, s tenant.Store) {
	cur := mustCreate(t, s, newTenant("acme"))
	for _, bad := range []tenant.Status{tenant.StatusDeleted, tenant.StatusUpdating, "sleeping"} {
		_, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 1, Status: bad})
		wantErr(t, "requested → "+string(bad), err, tenant.ErrInvalidTransition)
	}
	sameTenant(t, "Get after refused transitions", mustGet(t, s, cur.ID), cur)
	// Staying in a state to update the message records no status event.
	prov := mustObserve(t, s, cur, tenant.StatusProvisioning)
	if _, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Message: "pulling image"}); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, cur.ID); got.StatusMessage != "pulling image" {
		t.Errorf("message = %q", got.StatusMessage)
	}
	if n := len(mustEvents(t, s, cur.ID)); n != 2 {
		t.Errorf("%d events, want 2 (created, requested→provisioning)", n)
	}
	_, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Settles: true})
	wantErr(t, "settling a generation in provisioning", err, tenant.ErrInvalidTransition)
	unsettled, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 1, Status: tenant.StatusFailed, Message: "not settled"})
	if err != nil || unsettled.ObservedGeneration != 0 {
		t.Errorf("an observation that does not settle moved ObservedGeneration to %d (%v)", unsettled.ObservedGeneration, err)
	}
	failed := mustObserve(t, s, prov, tenant.StatusFailed)
	if failed.ObservedGeneration != 1 {
		t.Errorf("failed settles the generation: observed %d", failed.ObservedGeneration)
	}
	_, err = s.UpdateObserved(ctx, tenant.NewID(), tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning})
	wantErr(t, "UpdateObserved of an unknown tenant", err, tenant.ErrNotFound)
}

func testDeletion(t *testing.T, s tenant.Store) {
	cur := mustCreate(t, s, newTenant("acme"))
	ready := mustObserve(t, s, mustObserve(t, s, cur, tenant.StatusProvisioning), tenant.StatusReady)
	_, err := s.RequestDeletion(ctx, cur.ID, ready.Version+5, "bob")
	wantErr(t, "RequestDeletion with a stale version", err, tenant.ErrConflict)
	del, err := s.RequestDeletion(ctx, cur.ID, ready.Version, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if del.Status != tenant.StatusDeleting || del.Generation != 2 || del.DeletionRequestedAt == nil || del.DeletedAt != nil {
		t.Errorf("after RequestDeletion: %+v", del)
	}
	again, err := s.RequestDeletion(ctx, cur.ID, 0, "bob")
	if err != nil || again.Generation != del.Generation || again.Version != del.Version {
		t.Errorf("repeating RequestDeletion = %+v, %v; want no change", again, err)
	}
	_, err = s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: del.Version, ComputeConfig: json.RawMessage(`{"image":"x"}`)})
	wantErr(t, "UpdateDesired of a deleting tenant", err, tenant.ErrConflict)
	_, err = s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: del.Generation, Status: tenant.StatusReady})
	wantErr(t, "deleting → ready", err, tenant.ErrInvalidTransition)

	gone := mustObserve(t, s, del, tenant.StatusDeleted)
	if gone.DeletedAt == nil || gone.ObservedGeneration != del.Generation || gone.ResourceIDs != nil {
		t.Errorf("deleted: %+v", gone)
	}
	_, err = s.Get(ctx, cur.ID, tenant.GetOptions{})
	wantErr(t, "Get of a deleted tenant", err, tenant.ErrNotFound)
	if got := listAll(t, s, tenant.ListOptions{}); len(got) != 0 {
		t.Errorf("List shows deleted tenants: %v", names(got))
	}
	if got := listAll(t, s, tenant.ListOptions{IncludeDeleted: true}); len(got) != 1 {
		t.Errorf("List with IncludeDeleted = %v", names(got))
	}
	if got := listAll(t, s, tenant.ListOptions{Statuses: []tenant.Status{tenant.StatusDeleted}}); len(got) != 1 {
		t.Errorf("List of status deleted = %v", names(got))
	}
	_, err = s.RequestDeletion(ctx, cur.ID, 0, "bob")
	if err != nil && !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("RequestDeletion of a deleted tenant = %v, want no change or ErrNotFound", err)
	}
	var types []string
	for _, e := range mustEvents(t, s, cur.ID) {
		types = append(types, string(e.Type)+":"+string(e.To))
	}
	if want := "created:requested status:provisioning status:ready delete_requested: status:deleting status:deleted"; strings.Join(types, " ") != want {
		t.Errorf("events = %v, want %s", types, want)
	}
}
