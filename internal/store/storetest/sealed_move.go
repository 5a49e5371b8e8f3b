package storetest

import (
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/seal"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// testMoveSecrets: a move's target config is sealed at rest from the
// request on, opens on read, survives the switch (when it becomes the
// placement's, in the compute_config column, and the source's goes into
// the move), is reached by rotation, and is gone with the move.
func testMoveSecrets(t *testing.T, db SealedDB) {
	s := openSealed(t, db, SealConfigs(t, "k1", "k1"))
	source := SecretTenant("acme")
	cur := mustObserve(t, s, mustObserve(t, s, mustCreate(t, s, source), tenant.StatusProvisioning), tenant.StatusReady)
	target := SecretTenant("acme-target").ComputeConfig
	moving, err := s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, Actor: "test",
		Move: &tenant.MoveAction{Kind: tenant.MoveStart, Provider: "mock", ComputeConfig: target}})
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, "the move's target, as written", moving.Placements[0].Move.Other.ComputeConfig, target)
	checkConfig(t, "the move's target, read back", mustGet(t, s, cur.ID).Placements[0].Move.Other.ComputeConfig, target)
	sealedIn := func(what, raw string, secrets []string) {
		t.Helper()
		for _, secret := range secrets {
			if strings.Contains(raw, secret) {
				t.Errorf("%s holds the secret %q in plain text: %s", what, secret, raw)
			}
		}
	}
	sealedIn("the placements column while moving", db.RawPlacements(t, cur.ID), SecretsOf("acme-target"))
	if raw := db.RawPlacements(t, cur.ID); strings.Count(raw, "llsec:v1:k1:") != 3 {
		t.Errorf("the placements column does not hold the target's 3 values sealed: %s", raw)
	}

	// The controller's observations of the target, then the switch.
	observe := func(status tenant.Status, step tenant.MoveStep) {
		t.Helper()
		next, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: moving.Generation, Placement: tenant.DefaultPlacement, Other: true,
			Status: status, Settles: status.Settled(), MoveStep: step, Actor: "test"})
		if err != nil {
			t.Fatalf("observe the target %s %s: %v", status, step, err)
		}
		moving = next
	}
	observe(tenant.StatusProvisioning, "")
	observe(tenant.StatusReady, tenant.MoveDestroyingSource)
	got := mustGet(t, s, cur.ID)
	checkConfig(t, "the placement after the switch", got.Placements[0].ComputeConfig, target)
	checkConfig(t, "the tenant after the switch", got.ComputeConfig, target)
	checkConfig(t, "the source after the switch", got.Placements[0].Move.Other.ComputeConfig, source.ComputeConfig)
	sealedIn("the compute_config column after the switch", db.Raw(t, cur.ID), SecretsOf("acme-target"))
	sealedIn("the placements column after the switch", db.RawPlacements(t, cur.ID), append(SecretsOf("acme"), SecretsOf("acme-target")...))

	// Rotation reaches the source's config in the move.
	both := SealConfigs(t, "k2", "k1", "k2")
	if _, err := seal.Rotate(ctx, mustRewriter(t, openSealed(t, db, both)), both, seal.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	if raw := db.RawPlacements(t, cur.ID) + db.Raw(t, cur.ID); strings.Contains(raw, ":k1:") {
		t.Errorf("after rotation, values sealed with k1 remain: %s", raw)
	}
	rotated := mustGet(t, openSealed(t, db, SealConfigs(t, "k2", "k2")), cur.ID)
	checkConfig(t, "the source after rotation", rotated.Placements[0].Move.Other.ComputeConfig, source.ComputeConfig)

	s = openSealed(t, db, both)
	observe(tenant.StatusDeleting, "")
	observe(tenant.StatusDeleted, "")
	done := mustGet(t, openSealed(t, db, both), cur.ID)
	if done.Moving() || done.Status != tenant.StatusReady {
		t.Errorf("after the source is destroyed: moving %t, %s", done.Moving(), done.Status)
	}
	if raw := db.RawPlacements(t, cur.ID); strings.Contains(raw, "db-pw-acme\\") || strings.Contains(raw, `"move"`) {
		t.Errorf("the move is still in the placements column: %s", raw)
	}
}
