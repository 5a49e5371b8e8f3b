package provider

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"

	"github.com/jaxxstorm/landlord/internal/jsonscan"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// TenantComputeSpec is the provider-agnostic description of a tenant's
// workload that the Manager hands to a provider: a tenant's compute_config
// resolved once (provider chosen, defaults merged, validated, decoded).
// Build it with Manager.Resolve; providers treat it as read-only and never
// parse ProviderConfig again: what they need of it is in the workload and
// in Options.
type TenantComputeSpec struct {
	// TenantID is the tenant's immutable id. Providers name and label their
	// resources from it so that they can find them again after a restart.
	TenantID string `json:"tenant_id"`
	// TenantName is the tenant's DNS-label name, for readable resource names.
	TenantName string `json:"tenant_name,omitempty"`
	// ProviderType is the name of the provider the spec is meant for.
	ProviderType string `json:"provider_type"`
	// Generation is the tenant's desired-state generation the spec was built
	// from; providers may record it on their resources.
	Generation int64 `json:"generation,omitempty"`
	// Workload is the portable container workload (containers, resources,
	// networking, secrets), decoded from the config; empty when the config
	// has none.
	workload.Workload
	// ProviderConfig is the tenant's merged compute_config (provider defaults
	// under tenant values, selection keys removed), in canonical form. It may
	// hold secrets and must never be logged; use Manager.RedactConfig first.
	ProviderConfig json.RawMessage `json:"-"`
	// Options is what the provider's ConfigDecoder read from ProviderConfig:
	// its own fields, decoded once. Nil for providers without one.
	Options any `json:"-"`
	// ConfigHash fingerprints ProviderConfig, keyed with the install's key
	// (ManagerOptions.HashKey): equal hashes mean an update has nothing to
	// do. Providers may record it on their resources; it reveals nothing of
	// the secrets it covers.
	ConfigHash string `json:"-"`
	// Drift is what the controller does when the platform differs from
	// the spec: the config's "drift" field, DriftRepair when it has none.
	// It changes nothing on the platform.
	Drift DriftPolicy `json:"drift,omitempty"`
	// ResourceIDs are what the last successful Provision or Update of the
	// tenant returned (ResolveRequest.ResourceIDs); empty for a new tenant.
	// A Locator uses them to find the workload where it runs; they are not
	// part of the desired state.
	ResourceIDs map[string]string `json:"-"`

	// resolved is the ProviderConfig that Resolve validated, so that
	// ValidateSpec can tell a resolved spec from one whose config was changed
	// afterwards without parsing it again.
	resolved json.RawMessage
}

// MarkResolved records that ProviderConfig is the config a host resolved
// and validated (landlord's Manager.Resolve, or the plugin server on behalf
// of the host it serves), so that ValidateSpec accepts it. A config changed
// afterwards is refused again. Providers never call it.
func (s *TenantComputeSpec) MarkResolved() { s.resolved = s.ProviderConfig }

// Resolved reports whether ProviderConfig is the config a host resolved
// and validated, unchanged since (see MarkResolved).
func (s *TenantComputeSpec) Resolved() bool {
	return s.resolved != nil && bytes.Equal(s.resolved, s.ProviderConfig)
}

// LogValue keeps specs out of logs except for identifying, secret-free fields.
func (s *TenantComputeSpec) LogValue() slog.Value {
	if s == nil {
		return slog.StringValue("<nil>")
	}
	return slog.GroupValue(
		slog.String("tenant_id", s.TenantID),
		slog.String("provider", s.ProviderType),
		slog.Int64("generation", s.Generation),
		slog.Int("containers", len(s.Containers)),
	)
}

// String is the secret-free form used by fmt.
func (s *TenantComputeSpec) String() string {
	if s == nil {
		return "<nil>"
	}
	return fmt.Sprintf("tenant %s on %s (generation %d, %d containers)", s.TenantID, s.ProviderType, s.Generation, len(s.Containers))
}

// Hash returns ConfigHash. For a spec not built by Resolve it computes a
// fingerprint of everything that shapes the workload instead: containers,
// networking, secret values and the provider config in canonical form, but
// not the tenant's identity or generation.
func (s *TenantComputeSpec) Hash() string {
	if s.ConfigHash != "" {
		return s.ConfigHash
	}
	type secret struct{ Container, Name, Value string }
	secrets := make([]secret, len(s.Secrets))
	for i, r := range s.Secrets {
		secrets[i] = secret{r.Container, r.Name, r.Value.Reveal()}
	}
	var config any = string(s.ProviderConfig)
	if v, err := workload.DecodeValue(s.ProviderConfig, "config"); err == nil {
		config = v // whitespace and key order do not change the hash
	} else if jsonscan.IsNull(s.ProviderConfig) {
		config = nil
	}
	b, _ := json.Marshal(struct {
		Containers []workload.ContainerSpec
		Networking workload.NetworkConfig
		Secrets    []secret
		Config     any
	}{s.Containers, s.Networking, secrets, config})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Clone returns a deep copy of the spec. Options are shared: providers treat
// them as read-only.
func (s *TenantComputeSpec) Clone() *TenantComputeSpec {
	if s == nil {
		return nil
	}
	out := *s
	out.Workload = s.Workload.Clone()
	out.ProviderConfig = bytes.Clone(s.ProviderConfig)
	out.ResourceIDs = maps.Clone(s.ResourceIDs)
	if s.resolved != nil && bytes.Equal(s.resolved, s.ProviderConfig) {
		out.resolved = out.ProviderConfig
	}
	return &out
}
