package docker

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

var (
	labelPrefix = regexp.MustCompile(`^[a-z][a-z0-9.-]{0,30}$`)
	unsafeName  = regexp.MustCompile(`[^a-z0-9-]+`)
)

// Label keys, after the label prefix and a dot.
const (
	labelTenantID   = "tenant_id"
	labelTenantName = "tenant_name"
	labelManagedBy  = "managed-by"
	labelGeneration = "generation"
	labelConfigHash = "config-hash"
	labelContainer  = "container"
	labelProbe      = "probe"
	managedBy       = "landlord"
	// previousSuffix marks a container renamed aside during a replacement.
	previousSuffix = "-previous"
)

// naming builds the names and labels of one tenant's resources.
type naming struct {
	prefix     string
	tenantID   string
	tenantName string
}

func (p *Provider) naming(tenantID, tenantName string) naming {
	return naming{prefix: p.settings.LabelPrefix, tenantID: tenantID, tenantName: tenantName}
}

func (n naming) label(key string) string { return n.prefix + "." + key }

// base is <prefix>-<tenant name>-<short id>.
func (n naming) base() string {
	name := strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(n.tenantName), "-"), "-")
	if name == "" {
		name = "tenant"
	}
	if len(name) > 63 {
		name = name[:63]
	}
	return n.prefix + "-" + name + "-" + shortID(n.tenantID)
}

// container is the Docker name of a tenant container.
func (n naming) container(name string) string { return n.base() + "-" + name }

// network is the per-tenant network's name.
func (n naming) network() string { return n.base() }

// tenantFilter selects everything of the tenant.
func (n naming) tenantFilter() string { return n.label(labelTenantID) + "=" + n.tenantID }

// labels are the labels of every resource of the tenant.
func (n naming) labels(generation int64) map[string]string {
	return map[string]string{
		n.label(labelTenantID):   n.tenantID,
		n.label(labelTenantName): n.tenantName,
		n.label(labelManagedBy):  managedBy,
		n.label(labelGeneration): strconv.FormatInt(generation, 10),
	}
}

// shortID is the first 8 alphanumeric characters of a tenant id.
func shortID(id string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(id) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			if b.Len() == 8 {
				break
			}
		}
	}
	return b.String()
}

// containerHash fingerprints everything that shapes one container: its spec,
// its secrets, where its ports bind and the tenant's Docker options. Equal
// hashes mean the container needs no change. It is an HMAC-SHA256 keyed with
// the install's key, not a plain hash: the label is readable by anyone who
// can list containers, and a plain hash of a config that includes secret
// values would let them test guesses of a secret offline.
func containerHash(key []byte, c workload.ContainerSpec, secrets []workload.SecretReference, hostIP, network string, o tenantOptions) string {
	type secret struct{ Name, Value string }
	var own []secret
	for _, s := range secrets {
		if s.Container == c.Name {
			own = append(own, secret{s.Name, s.Value.Reveal()})
		}
	}
	o.PullPolicy = "" // when to pull does not shape the container
	b, _ := json.Marshal(struct {
		Container workload.ContainerSpec
		Secrets   []secret
		HostIP    string
		Network   string
		Options   tenantOptions
	}{c, own, hostIP, network, o})
	return provider.Fingerprint(key, b)
}
