package storetest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/seal"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// secretPlacements is a tenant of two placements on mock, web and worker,
// whose configs hold the secrets of SecretTenant("web-"+name) and
// SecretTenant("worker-"+name).
func secretPlacements(name string) *tenant.Tenant {
	in := newTenant(name)
	in.Provider, in.ComputeConfig = "", nil
	in.Placements = []tenant.Placement{
		{Name: "web", Provider: "mock", ComputeConfig: SecretTenant("web-" + name).ComputeConfig},
		{Name: "worker", Provider: "mock", ComputeConfig: SecretTenant("worker-" + name).ComputeConfig},
	}
	return in
}

// storedPlacementConfig is the config of the placement at index i in
// text, a placements column.
func storedPlacementConfig(t *testing.T, text string, i int) json.RawMessage {
	t.Helper()
	var ps []struct {
		ComputeConfig json.RawMessage `json:"compute_config"`
	}
	if err := json.Unmarshal([]byte(text), &ps); err != nil || len(ps) <= i {
		t.Fatalf("placements column %s: %v; want placement %d", text, err, i)
	}
	return ps[i].ComputeConfig
}

// checkPlacementsSealed fails t unless the database holds tenant id's
// configs (secretPlacements(name)) sealed with key: web's in the
// compute_config column, worker's in the placements column, with none of
// their secrets in plain text anywhere.
func checkPlacementsSealed(t *testing.T, db SealedDB, id, name, key string) {
	t.Helper()
	secrets := append(SecretsOf("web-"+name), SecretsOf("worker-"+name)...)
	checkSealed(t, db, id, key, secrets...)
	raw := db.RawPlacements(t, id)
	for _, s := range secrets {
		if strings.Contains(raw, s) {
			t.Errorf("the placements column holds the secret %q in plain text: %s", s, raw)
		}
	}
	if want := `"llsec:v1:` + key + `:`; strings.Count(raw, want) != 3 || strings.Count(raw, "llsec:") != 3 {
		t.Errorf("the placements column of %s does not hold worker's 3 values sealed with %s, and only those: %s", id, key, raw)
	}
	if !strings.Contains(raw, "plain-worker-"+name) || strings.Contains(raw, "plain-web-"+name) {
		t.Errorf("the placements column holds worker's config but for its secrets, and not web's (the compute_config column's): %s", raw)
	}
}

// checkPlacementConfigs fails t unless got's placements have the configs
// of want's.
func checkPlacementConfigs(t *testing.T, what string, got, want *tenant.Tenant) {
	t.Helper()
	if len(got.Placements) != len(want.Placements) {
		t.Fatalf("%s: %d placements, want %d", what, len(got.Placements), len(want.Placements))
	}
	for i := range want.Placements {
		checkConfig(t, what+" placement "+want.Placements[i].Name, got.Placements[i].ComputeConfig, want.Placements[i].ComputeConfig)
	}
}

// testPlacementSecrets: the secrets of every placement of a tenant are
// sealed at rest and open on read; a write that keeps a placement's config
// keeps its sealed text; and rotation reaches every placement.
func testPlacementSecrets(t *testing.T, db SealedDB) {
	s := openSealed(t, db, SealConfigs(t, "k1", "k1"))
	in := secretPlacements("acme")
	created := mustCreate(t, s, in)
	checkPlacementConfigs(t, "Create", created, in)
	checkPlacementsSealed(t, db, created.ID, "acme", "k1")
	checkPlacementConfigs(t, "Get", mustGet(t, s, created.ID), in)
	page, err := s.List(ctx, tenant.ListOptions{})
	if err != nil || len(page.Tenants) != 1 {
		t.Fatalf("List = %v, %v", page, err)
	}
	checkPlacementConfigs(t, "List", page.Tenants[0], in)

	// Observations keep the sealed text of worker's config as it is.
	before := storedPlacementConfig(t, db.RawPlacements(t, created.ID), 1)
	ready := mustReadyPlacements(t, s, created)
	checkPlacementConfigs(t, "UpdateObserved", ready, in)
	if after := storedPlacementConfig(t, db.RawPlacements(t, created.ID), 1); !bytes.Equal(after, before) {
		t.Errorf("observations rewrote worker's sealed config:\n%s\n%s", before, after)
	}

	// A change of worker's secret seals the new value, and keeps web's
	// sealed text as it was.
	web := db.Raw(t, created.ID)
	next := ready.Placements[1]
	next.ComputeConfig = bytes.Replace(next.ComputeConfig, []byte("db-pw-worker-acme"), []byte("db-pw-worker-acme-2"), 1)
	updated, err := s.UpdateDesired(ctx, created.ID, tenant.DesiredChange{Version: ready.Version, Placements: specs(ready.Placements[0], next),
		Labels: in.Labels, Annotations: in.Annotations, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, "UpdateDesired worker", updated.Placements[1].ComputeConfig, next.ComputeConfig)
	checkConfig(t, "Get after UpdateDesired worker", mustGet(t, s, created.ID).Placements[1].ComputeConfig, next.ComputeConfig)
	if after := db.Raw(t, created.ID); after != web {
		t.Errorf("a change of worker's config rewrote web's:\n%s\n%s", web, after)
	}
	if raw := db.RawPlacements(t, created.ID); strings.Contains(raw, "db-pw-worker-acme-2") || strings.Count(raw, "llsec:v1:k1:") != 3 {
		t.Errorf("worker's new secret is not sealed: %s", raw)
	}

	// Rotation reaches worker's config, in the placements column.
	both := SealConfigs(t, "k2", "k1", "k2")
	if _, err := seal.Rotate(ctx, mustRewriter(t, openSealed(t, db, both)), both, seal.RotateOptions{BatchSize: 1}); err != nil {
		t.Fatal(err)
	}
	raw := db.RawPlacements(t, created.ID)
	if strings.Contains(raw, ":k1:") || strings.Count(raw, "llsec:v1:k2:") != 3 || strings.Contains(raw, "db-pw-worker-acme-2") {
		t.Errorf("after rotation, the placements column holds values not sealed with k2: %s", raw)
	}
	if raw := db.Raw(t, created.ID); strings.Contains(raw, ":k1:") || strings.Count(raw, "llsec:v1:k2:") != 3 {
		t.Errorf("after rotation, the compute_config column holds values not sealed with k2: %s", raw)
	}
	rotated := mustGet(t, openSealed(t, db, SealConfigs(t, "k2", "k2")), created.ID)
	checkPlacementConfigs(t, "Get after rotation, with k2 alone", rotated, updated)
	sameTenant(t, "Get after rotation", rotated, updated)

	// And back to plain text.
	if _, err := seal.Rotate(ctx, mustRewriter(t, openSealed(t, db, both)), both, seal.RotateOptions{Decrypt: true}); err != nil {
		t.Fatal(err)
	}
	if raw := db.RawPlacements(t, created.ID); strings.Contains(raw, "llsec:") || !strings.Contains(raw, "db-pw-worker-acme-2") {
		t.Errorf("after rotation to plain text, the placements column is still sealed: %s", raw)
	}
	checkPlacementConfigs(t, "Get after rotation to plain text", mustGet(t, openSealed(t, db, nil), created.ID), updated)
}

// testSimplePlacementsColumn: a tenant of one placement, as every tenant
// was before placements, keeps its placements column '[]' whatever is
// written, its config sealed in the compute_config column alone.
func testSimplePlacementsColumn(t *testing.T, db SealedDB) {
	s := openSealed(t, db, SealConfigs(t, "k1", "k1"))
	in := SecretTenant("acme")
	check := func(what string, tn *tenant.Tenant) {
		t.Helper()
		if raw := db.RawPlacements(t, tn.ID); raw != "[]" {
			t.Errorf("%s: the placements column of a simple tenant = %s, want []", what, raw)
		}
		if !tn.Simple() || len(tn.Placements) != 1 || tn.Placements[0].Name != tenant.DefaultPlacement {
			t.Errorf("%s: placements %v, want the default one", what, tn.PlacementNames())
		}
	}
	created := mustCreate(t, s, in)
	check("Create", created)
	check("Get", mustGet(t, s, created.ID))
	checkConfig(t, "Get default placement", mustGet(t, s, created.ID).Placements[0].ComputeConfig, in.ComputeConfig)
	cur := mustObserve(t, s, created, tenant.StatusProvisioning)
	check("UpdateObserved", cur)
	cur = mustObserve(t, s, cur, tenant.StatusReady)
	next := bytes.Replace(in.ComputeConfig, []byte("db-pw-acme"), []byte("db-pw-acme-2"), 1)
	cur, err := s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: next, Labels: in.Labels, Annotations: in.Annotations, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	check("UpdateDesired", cur)
	// Declaring its one placement, named default, keeps it simple too.
	cur, err = s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, Placements: specs(tenant.Placement{Name: tenant.DefaultPlacement, Provider: "mock", ComputeConfig: in.ComputeConfig}),
		Labels: in.Labels, Annotations: in.Annotations, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	check("UpdateDesired of its placements", cur)
	both := SealConfigs(t, "k2", "k1", "k2")
	rotated := openSealed(t, db, both)
	if _, err := seal.Rotate(ctx, mustRewriter(t, rotated), both, seal.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	checkSealed(t, db, cur.ID, "k2", SecretsOf("acme")...)
	check("Rotate", mustGet(t, rotated, cur.ID))
	check("deleted", mustDelete(t, rotated, cur))
}
