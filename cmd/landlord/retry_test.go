package main

import (
	"testing"

	"github.com/jaxxstorm/landlord/client/clienttest"
)

// A tenant that failed says to run landlord retry, which tries it again
// with the config it has; landlord set with that config changes nothing.
func TestRetry(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Controller: true})
	config := `{"image":"a","x-mock":{"fail":"terminal","fail_times":1,"operations":["provision"]}}`
	res := mustRunCLI(t, srv, exitFailure, "", "create", "acme", "--config", config, "--wait", "--timeout", "30s")
	mustContain(t, "stderr", res.stderr, "landlord: tenant acme failed: ", "landlord retry acme")

	// The same config again is no change.
	res = mustRunCLI(t, srv, exitOK, "", "set", "acme", "--config", config, "-o", "json")
	if tn := mustTenantJSON(t, res.stdout); tn.Status != "failed" || tn.Generation != 1 {
		t.Fatalf("set with the same config: %s at generation %d", tn.Status, tn.Generation)
	}

	res = mustRunCLI(t, srv, exitOK, "", "retry", "acme", "--wait", "--timeout", "30s", "-o", "json")
	if tn := mustTenantJSON(t, res.stdout); tn.Status != "ready" || tn.Generation != 2 || tn.Annotations["landlord.io/retry"] == "" {
		t.Errorf("after retry: %s at generation %d, annotations %v", tn.Status, tn.Generation, tn.Annotations)
	}
	mustContain(t, "progress", res.stderr, "acme: ready\n")

	// A ready tenant has nothing to try again, and is left alone.
	res = mustRunCLI(t, srv, exitFailure, "", "retry", "acme")
	mustContain(t, "stderr", res.stderr, "landlord: tenant acme is ready, with no failed attempt to try again\n")
	mustRunCLI(t, srv, exitNotFound, "", "retry", "nosuch")

	// A deletion that failed is tried again by delete.
	mustRunCLI(t, srv, exitOK, "", "create", "doomed", "--config", `{"image":"a","x-mock":{"fail":"terminal","operations":["destroy"]}}`, "--wait", "--timeout", "30s")
	mustRunCLI(t, srv, exitFailure, "", "delete", "doomed", "--wait", "--timeout", "30s")
	res = mustRunCLI(t, srv, exitFailure, "", "retry", "doomed")
	mustContain(t, "stderr", res.stderr, "landlord: retry tenant doomed: its deletion was asked for, and it cannot be changed; landlord delete doomed tries a deletion that failed again (409 tenant_deleting)")
	mustRunCLI(t, srv, exitUsage, "", "retry")
}
