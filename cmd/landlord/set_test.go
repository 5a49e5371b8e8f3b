package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/client/clienttest"
)

func TestSet(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Controller: true})
	mustRunCLI(t, srv, exitOK, "", "create", "acme", "--config", "image: a", "--label", "tier=gold", "--annotation", "owner=ops", "--wait", "--timeout", "30s")

	t.Run("keeps labels when none are given", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitOK, "", "set", "acme", "--config", `{"image": "b"}`, "-o", "json")
		tn := mustTenantJSON(t, res.stdout)
		if diff := cmp.Diff(map[string]string{"tier": "gold"}, tn.Labels); diff != "" {
			t.Errorf("labels (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]string{"owner": "ops"}, tn.Annotations); diff != "" {
			t.Errorf("annotations (-want +got):\n%s", diff)
		}
		if tn.Generation != 2 || !strings.Contains(string(tn.ComputeConfig), `"image": "b"`) {
			t.Errorf("set: generation %d, config %s", tn.Generation, tn.ComputeConfig)
		}
	})
	t.Run("replaces labels given, waits for the change", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitOK, "", "set", "acme", "--config", "image: c", "--label", "tier=silver", "--wait", "--timeout", "30s", "-o", "json")
		tn := mustTenantJSON(t, res.stdout)
		if diff := cmp.Diff(map[string]string{"tier": "silver"}, tn.Labels); diff != "" {
			t.Errorf("labels (-want +got):\n%s", diff)
		}
		if tn.Annotations["owner"] != "ops" || tn.Status != "ready" || tn.ObservedGeneration != tn.Generation || tn.Generation != 3 {
			t.Errorf("after set --wait: %+v", tn)
		}
		mustContain(t, "progress", res.stderr, "acme: ready")
	})
	t.Run("invalid", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitFailure, "", "set", "acme", "--config", `{"image": ""}`)
		mustContain(t, "stderr", res.stderr, "landlord: set tenant acme: ", "(422 invalid_compute_config)", "\n  /compute_config/image: ")
	})
	t.Run("unknown tenant", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitNotFound, "", "set", "nobody", "--config", "image: a")
		mustContain(t, "stderr", res.stderr, "landlord: tenant nobody: no such tenant", "(404 tenant_not_found)")
	})
	t.Run("fails to become ready", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitFailure, "", "set", "acme", "--config", `{"image":"d","x-mock":{"fail":"terminal","operations":["update"]}}`, "--wait", "--timeout", "30s")
		mustContain(t, "stderr", res.stderr, "landlord: tenant acme failed: ")
	})
	t.Run("usage", func(t *testing.T) {
		mustRunCLI(t, srv, exitUsage, "", "set", "acme")
	})
}
