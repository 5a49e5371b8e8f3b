package kubernetes

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Names are valid DNS labels whatever the tenant's name, deterministic,
// and distinct for distinct tenants even when shortened.
func TestNames(t *testing.T) {
	long := strings.Repeat("a", 60) + "-x1"
	longer := strings.Repeat("a", 60) + "-x2"
	for _, tt := range []struct {
		name, tenant string
		o            tenantOptions
		want         names
	}{
		{"plain", "acme", tenantOptions{}, names{namespace: "landlord-acme", object: "acme", secret: "acme-secrets"}},
		{"leading digit", "42shop", tenantOptions{}, names{namespace: "landlord-42shop", object: "t-42shop", secret: "t-42shop-secrets"}},
		{"shared", "acme", tenantOptions{NamespaceMode: Shared, Namespace: "tenants"}, names{namespace: "tenants", object: "acme", secret: "acme-secrets"}},
		{"no prefix", "acme", tenantOptions{NamespacePrefix: new(string)}, names{namespace: "acme", object: "acme", secret: "acme-secrets"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := namesOf(tt.o, tt.tenant); got != tt.want {
				t.Errorf("namesOf = %+v, want %+v", got, tt.want)
			}
		})
	}
	a, b := namesOf(tenantOptions{}, long), namesOf(tenantOptions{}, longer)
	for _, n := range []names{a, b} {
		for _, s := range []string{n.namespace, n.object, n.secret} {
			if msgs := validation.IsDNS1123Label(s); len(msgs) > 0 {
				t.Errorf("%q: %v", s, msgs)
			}
		}
		if msgs := validation.IsDNS1035Label(n.object); len(msgs) > 0 {
			t.Errorf("object name %q is no Service name: %v", n.object, msgs)
		}
	}
	if a.namespace == b.namespace || a.object == b.object || a.secret == b.secret {
		t.Errorf("two long names shortened to the same: %+v and %+v", a, b)
	}
	if again := namesOf(tenantOptions{}, long); again != a {
		t.Errorf("names are not deterministic: %+v then %+v", a, again)
	}
}
