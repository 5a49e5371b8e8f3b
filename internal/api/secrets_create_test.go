package api_test

import (
	"slices"
	"testing"

	"github.com/jaxxstorm/landlord/internal/wire"
)

// A create has no stored secret to keep: a secret sent as "[redacted]"
// (however its text is escaped) is refused at its pointer, never stored as
// the secret.
func TestCreateRefusesARedactedSecret(t *testing.T) {
	ts := newServer(t)
	for _, body := range []string{
		`{"name":"acme","compute_config":{"image":"a","secrets":{"DB":"[redacted]"}}}`,
		`{"name":"acme","compute_config":{"image":"a","secrets":{"DB":"\u005bredacted]"}}}`,
		`{"name":"acme","compute_config":{"image":"a","sidecars":[{"name":"s","image":"b","secrets":{"DB":"[redacted]"}}]}}`,
	} {
		res := ts.do(t, "POST", "/v1/tenants", "application/json", body)
		p := res.problem(t)
		if res.status != 422 || p.Code != wire.CodeInvalidComputeConfig || !slices.ContainsFunc(pointers(p), func(s string) bool { return len(s) > len("/compute_config") }) {
			t.Errorf("create with %s: %d %s %v, want 422 naming the secret", body, res.status, p.Code, pointers(p))
		}
	}
}
