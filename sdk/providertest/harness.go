package providertest

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Harness describes a provider to the conformance suite.
type Harness struct {
	// Provider is the provider under test. Its configuration must let the
	// suite create, update and destroy workloads.
	Provider provider.Provider

	// Config returns a valid compute_config for a new tenant. Variants 0 and
	// 1 must differ in a way that Update applies and GetStatus shows: at
	// least the main container's image. When the provider's schema has a
	// top-level "secrets" object, the suite adds a secret to every config and
	// checks that it never appears in logs, results or statuses.
	Config func(variant int) json.RawMessage

	// SecretValue, if set, turns the random token the suite uses as a
	// secret into a value the provider accepts as one: a provider that takes
	// references to a secret store rather than values (ECS takes SSM and
	// Secrets Manager ARNs) wraps the token in one. The whole value is then
	// what must never appear in logs, results or statuses.
	SecretValue func(token string) string

	// InvalidConfigs are configs the provider must refuse, each with the JSON
	// pointer its violation must carry.
	InvalidConfigs []InvalidConfig

	// Disrupt, if set, changes a tenant's running workload behind the
	// provider's back (kills or removes a container), so that the suite can
	// check that GetStatus is live and that Provision repairs the workload.
	Disrupt func(t *testing.T, tenantID string)

	// Squat, if set, creates on the platform, behind landlord's back, a
	// resource of the name that a tenant called tenantName would take, which
	// belongs to no tenant, so that the suite can check that Provision
	// refuses it as a conflict and that neither it nor Destroy takes it over.
	// The returned function fails t when the squatter is not as Squat left
	// it, and removes it.
	Squat func(t *testing.T, tenantName string) (checkAndRemove func(t *testing.T))

	// Tampers are changes to a running workload made behind the provider's
	// back with the platform's own tools, one per kind of object and field
	// the provider writes, each made against the real platform (or its
	// wire-level fake). The suite checks that each is noticed, reported as
	// drift at its path, and repaired (see Tamper).
	Tampers []Tamper

	// CountResources, if set, counts what exists on the platform for the
	// tenant (containers, networks, services), read from the platform
	// directly, so that the suite can check that nothing is duplicated or
	// leaked.
	CountResources func(t *testing.T, tenantID string) int

	// Restart, if set, returns a new provider for the same platform, as a
	// restarted landlord process would create, so that the suite can check
	// that workloads are found again (adopted, never duplicated) and that
	// nothing the provider needs lived only in the old one's memory.
	Restart func(t *testing.T) provider.Provider

	// Logs, if set, returns what the provider has logged so far as JSON lines
	// (slog.JSONHandler). The suite checks that every line carries a
	// tenant_id and that no secret appears.
	Logs func() []byte

	// DialEndpoints says that the test process can reach the endpoints the
	// provider reports (as on a local Engine): the suite then checks that
	// every TCP host:port endpoint of a running workload accepts a
	// connection. Whatever it says, an endpoint's address must be host:port
	// or a URL with a scheme.
	DialEndpoints bool

	// Dial, if set, is how the suite connects to an endpoint's host:port
	// (for a platform whose names only its own resolver knows, such as a
	// Kubernetes Service's cluster DNS name); default a plain TCP dial.
	// An error wrapping ErrUnreachable says the address is one the test
	// process cannot reach by design (a host name only an outside DNS
	// would resolve): the suite logs it and does not dial it.
	Dial func(ctx context.Context, address string) (net.Conn, error)

	// ReadyTimeout bounds how long a workload may take to run after
	// Provision or Update returns; default 2 minutes.
	ReadyTimeout time.Duration

	// Parallel is the number of tenants driven at once in the concurrency
	// check; default 50.
	Parallel int
}

// InvalidConfig is a compute_config the provider must refuse.
type InvalidConfig struct {
	Name   string
	Config json.RawMessage
	// Pointer is the JSON pointer a violation must carry ("/ports/0/container_port").
	Pointer string
}

// ErrUnreachable marks an endpoint the harness cannot reach from the test
// process by design (see Harness.Dial).
var ErrUnreachable = errors.New("not reachable from the test process")

// dial connects to address within two seconds, through Dial when set.
func (h *Harness) dial(address string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if h.Dial != nil {
		return h.Dial(ctx, address)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", address)
}

func (h *Harness) readyTimeout() time.Duration {
	if h.ReadyTimeout > 0 {
		return h.ReadyTimeout
	}
	return 2 * time.Minute
}

func (h *Harness) parallel() int {
	if h.Parallel > 0 {
		return h.Parallel
	}
	return 50
}
