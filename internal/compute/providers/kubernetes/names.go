package kubernetes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Labels and annotations landlord sets on what it creates.
const (
	labelManagedBy = "app.kubernetes.io/managed-by"
	labelInstance  = "app.kubernetes.io/instance"
	labelTenantID  = "landlord.dev/tenant-id"
	managedBy      = "landlord"

	annotTenantName = "landlord.dev/tenant-name"
	annotGeneration = "landlord.dev/generation"
	// annotTemplate fingerprints the Pod template, so that the Pods of the
	// current template can be told from those of a rollout's earlier one.
	annotTemplate = "landlord.dev/template-hash"
	// annotPullSecrets lists, on a namespace of the tenant's own, the image
	// pull secrets copied into it, so that one dropped from the config is
	// deleted without listing Secrets.
	annotPullSecrets = "landlord.dev/pull-secrets"
	// annotIngress is the address (host:port) of the tenant's Ingress, for
	// its endpoint.
	annotIngress = "landlord.dev/ingress-address"
)

// fieldManager is landlord's name in server-side apply's managed fields.
const fieldManager = "landlord"

// maxLabel is the length limit of a DNS-1123 label, which namespaces and
// Service names are.
const maxLabel = 63

// shorten returns name, or when it is longer than max, its first
// characters and a hash of the whole: deterministic, and distinct for
// distinct names.
func shorten(name string, max int) string {
	if len(name) <= max {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return strings.TrimRight(name[:max-9], "-.") + "-" + hex.EncodeToString(sum[:4])
}

// names are the names of a tenant's objects.
type names struct {
	namespace string
	// object names the Deployment, Service, Ingress, NetworkPolicy and
	// ResourceQuota.
	object string
	// secret names the Secret of the tenant's secret environment values.
	secret string
}

// namesOf are where o puts the tenant called tenantName. A Service name
// must start with a letter; a tenant name that does not gets "t-".
func namesOf(o tenantOptions, tenantName string) names {
	object := tenantName
	if object == "" || object[0] < 'a' || object[0] > 'z' {
		object = "t-" + object
	}
	object = shorten(object, maxLabel)
	n := names{object: object, secret: shorten(object+"-secrets", maxLabel)}
	if o.mode() == Shared {
		n.namespace = o.sharedNamespace()
	} else {
		n.namespace = shorten(o.prefix()+tenantName, maxLabel)
	}
	return n
}

// ownLabels are the labels that say an object is the tenant's: its
// selector, and what the watch and the scans look for.
func ownLabels(tenantID, tenantName string) map[string]string {
	return map[string]string{labelManagedBy: managedBy, labelTenantID: tenantID, labelInstance: tenantName}
}

// labelsOf are the labels of each of the tenant's objects: the config's,
// then landlord's own, which a config cannot override.
func labelsOf(o tenantOptions, tenantID, tenantName string) map[string]string {
	out := maps.Clone(o.Labels)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, ownLabels(tenantID, tenantName))
	return out
}

// annotationsOf are the annotations of each of the tenant's objects.
func annotationsOf(o tenantOptions, tenantName string) map[string]string {
	out := maps.Clone(o.Annotations)
	if out == nil {
		out = map[string]string{}
	}
	out[annotTenantName] = tenantName
	return out
}

// ownedBy reports whether an object's labels say it is the tenant's, and
// if not, whose it is, for the conflict message.
func ownedBy(labels map[string]string, tenantID string) (bool, string) {
	switch id := labels[labelTenantID]; {
	case id == tenantID && labels[labelManagedBy] == managedBy:
		return true, ""
	case id != "":
		return false, "tenant " + id
	default:
		return false, "no landlord tenant"
	}
}

// fingerprint is an HMAC-SHA256 of v's JSON form keyed with the install's
// key, for annotations that anyone who may read an object can see.
func (p *Provider) fingerprint(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("kubernetes: fingerprint: %v", err)) // apply configurations always marshal
	}
	return provider.Fingerprint(p.hashKey, b)[:32]
}
