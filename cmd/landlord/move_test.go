package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/jaxxstorm/landlord/client/clienttest"
)

// landlord move holds a move for its approval, approves it and waits until
// it is done; cancels another; and refuses what it cannot do with a
// usage error or the API's reason.
func TestMove(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Controller: true})
	mustRunCLI(t, srv, exitOK, "", "create", "acme", "--config", `{"image":"a"}`, "--wait", "--timeout", "30s")

	res := mustRunCLI(t, srv, exitOK, "", "move", "acme", "--to", "mock", "--config", `image: b`, "--hold", "--wait", "--timeout", "30s", "-o", "json")
	tn := mustTenantJSON(t, res.stdout)
	if len(tn.Placements) != 1 || tn.Placements[0].Move == nil || tn.Placements[0].Move.Step != "awaiting_approval" || tn.Status != "updating" {
		t.Fatalf("held: %s, placements %+v", tn.Status, tn.Placements)
	}
	res = mustRunCLI(t, srv, exitOK, "", "move", "acme", "--approve", "--wait", "--timeout", "30s", "-o", "json")
	tn = mustTenantJSON(t, res.stdout)
	if tn.Status != "ready" || len(tn.Placements) != 1 || tn.Placements[0].Move != nil || compact(t, tn.ComputeConfig) != `{"compute_provider":"mock","image":"b"}` {
		t.Errorf("after the move: %s, config %s, placements %+v", tn.Status, tn.ComputeConfig, tn.Placements)
	}
	// The tenant of one placement takes a plain config as before.
	mustRunCLI(t, srv, exitOK, "", "set", "acme", "--config", `{"image":"c"}`, "--wait", "--timeout", "30s")

	mustRunCLI(t, srv, exitOK, "", "move", "acme", "--config", `{"image":"d"}`, "--hold", "--wait", "--timeout", "30s")
	res = mustRunCLI(t, srv, exitOK, "", "move", "acme", "--cancel", "--wait", "--timeout", "30s", "-o", "json")
	if tn := mustTenantJSON(t, res.stdout); tn.Status != "ready" || compact(t, tn.ComputeConfig) != `{"image":"c"}` {
		t.Errorf("after the cancel: %s, config %s", tn.Status, tn.ComputeConfig)
	}

	res = mustRunCLI(t, srv, exitFailure, "", "move", "acme", "--cancel")
	mustContain(t, "stderr", res.stderr, "(409 tenant_moving)")
	mustRunCLI(t, srv, exitUsage, "", "move", "acme")
	mustRunCLI(t, srv, exitUsage, "", "move", "acme", "--approve", "--cancel")
	mustRunCLI(t, srv, exitUsage, "", "move", "acme", "--to", "nomad", "--config", `{"compute_provider":"mock","image":"a"}`)
	mustRunCLI(t, srv, exitNotFound, "", "move", "nosuch", "--approve")
}

// compact is raw without insignificant space.
func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
