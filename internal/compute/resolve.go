package compute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// ResolveRequest is a tenant's desired compute state as stored or as sent to
// the API.
type ResolveRequest struct {
	TenantID   string
	TenantName string
	Generation int64
	// ComputeConfig is the tenant's compute_config, a JSON object.
	ComputeConfig json.RawMessage
	// Plan is the config of the plan version the tenant follows (a JSON
	// object that passed CheckPlanConfig), or empty: it is merged over the
	// provider's defaults and under ComputeConfig.
	Plan json.RawMessage
	// Previous is the tenant's stored compute_config when ComputeConfig
	// replaces it: secrets sent back as "[redacted]" keep their values from
	// it. Empty for a new tenant and for the controller.
	Previous    json.RawMessage
	Labels      map[string]string
	Annotations map[string]string
	// Provider is the provider already recorded for the tenant, or empty for
	// a new tenant. A config that chooses another provider is refused: a
	// tenant never moves between providers silently.
	Provider string
	// ResourceIDs are what the tenant's last successful Provision or Update
	// returned; they are passed on in the spec (TenantComputeSpec.ResourceIDs).
	ResourceIDs map[string]string
}

// Resolution is a tenant's compute config made ready for its provider.
type Resolution struct {
	// Config is the tenant's compute_config to store: ComputeConfig with the
	// secrets it sent back as "[redacted]" restored from Previous.
	Config json.RawMessage
	// Spec is the validated spec for the provider; Spec.ProviderType is the
	// chosen provider and Spec.ProviderConfig the merged config.
	Spec *provider.TenantComputeSpec
}

// Resolve is the one step between a tenant's compute_config and its
// provider. It chooses the provider, restores secrets sent back redacted,
// merges the provider's defaults and then the tenant's plan version (if any)
// under the tenant's values, validates the result against the provider's
// schema, decodes the portable workload and checks its rules and the provider's capabilities, has the provider decode
// and check its own fields (ConfigDecoder, else ValidateConfig), checks the
// spec with the provider's Validate, and fingerprints the config. Everything
// downstream uses the spec and never parses the config again.
//
// Errors are a *ProviderNotFoundError (saying where the tenant named the
// provider) or violations of kind ErrInvalidSpec. Pointers from the schema,
// the selection, the workload and the provider's config checks are relative
// to the compute_config; those from Validate name fields of the spec. A
// provider chosen by a label or an annotation that the tenant cannot use is
// a violation of kind ErrInvalidChoice, at the label or annotation.
func (m *Manager) Resolve(ctx context.Context, req ResolveRequest) (*Resolution, error) {
	config, err := workload.DecodeObject(req.ComputeConfig, "compute config")
	if err != nil {
		return nil, provider.AsInvalidSpec(err)
	}
	chosen, err := findSelection(config, req.Labels, req.Annotations)
	if err != nil {
		return nil, err
	}
	name, err := m.providerFor(chosen, req.Provider)
	if err != nil {
		return nil, err
	}
	entry, err := m.registry.get(name)
	if err != nil {
		return nil, err
	}
	res := &Resolution{Config: req.ComputeConfig}
	if mayHoldRedacted(req.ComputeConfig) {
		restored, err := entry.schema.KeepSecrets(config, req.Previous)
		if err != nil {
			return nil, err
		}
		if restored {
			if res.Config, err = json.Marshal(config); err != nil {
				return nil, fmt.Errorf("compute: encode config: %w", err)
			}
		}
	}
	removeSelection(config)
	base := entry.defaults
	if len(req.Plan) > 0 {
		plan, err := workload.DecodeObject(req.Plan, "plan config")
		if err != nil {
			return nil, fmt.Errorf("compute: the tenant's plan: %w", err)
		}
		base = workload.MergeObjects(base, plan)
	}
	// Merge even without defaults: the patch semantics drop the tenant's
	// nulls, so null means "absent" whatever the operator configured.
	merged := workload.MergeObjects(base, config)
	if err := entry.schema.ValidateValue(merged); err != nil {
		return nil, err
	}
	// The schema read 80.0 and 1e2 as integers; so does every decoder after
	// it, and the config is one spelling of its meaning on both stores.
	workload.IntegralNumbers(merged)
	effective, err := json.Marshal(merged) // canonical: keys sorted, integers as such
	if err != nil {
		return nil, fmt.Errorf("compute: encode effective config: %w", err)
	}
	spec := &provider.TenantComputeSpec{
		TenantID:       req.TenantID,
		TenantName:     req.TenantName,
		ProviderType:   name,
		Generation:     req.Generation,
		ProviderConfig: effective,
		ConfigHash:     m.fingerprint(effective),
		ResourceIDs:    maps.Clone(req.ResourceIDs),
		Drift:          provider.DriftRepair,
	}
	spec.MarkResolved()
	if policy, ok := merged["drift"].(string); ok {
		spec.Drift = provider.DriftPolicy(policy)
	}
	_, hasWorkload := merged["image"]
	if err := provider.DecodeSpec(entry.provider, effective, hasWorkload, spec); err != nil {
		return nil, err
	}
	if err := entry.provider.Validate(ctx, spec); err != nil {
		if !errors.Is(err, provider.ErrInvalidSpec) { // the platform did not answer a read-only check
			err = fmt.Errorf("compute: %s could not validate the config: %w", name, err)
		}
		return nil, err
	}
	res.Spec = spec
	return res, nil
}

// fingerprint is the ConfigHash of a canonical config: an HMAC-SHA256 keyed
// with the install's key, so that a hash recorded on a platform resource,
// readable by whoever can list them, does not let anyone test guesses of a
// secret in the config.
func (m *Manager) fingerprint(config []byte) string { return provider.Fingerprint(m.hashKey, config) }

// providerFor applies the selection rules: an explicit choice, else the
// tenant's recorded provider, else the default.
func (m *Manager) providerFor(chosen selection, recorded string) (string, error) {
	switch {
	case chosen.name != "" && recorded != "" && chosen.name != recorded:
		return "", chosen.invalid("the tenant runs on provider %q and cannot move to %s; delete and re-create it to change provider", recorded, chosen)
	case chosen.name != "":
		if _, err := m.registry.get(chosen.name); err != nil {
			return "", chosen.notFound(err)
		}
		return chosen.name, nil
	case recorded != "":
		return recorded, nil
	case m.defaultProvider != "":
		return m.defaultProvider, nil
	default:
		return "", &ProviderNotFoundError{Enabled: m.registry.Names()}
	}
}

// RedactConfig returns config with the values that the provider's schema
// marks writeOnly replaced by workload.RedactedValue.
func (m *Manager) RedactConfig(provider string, config json.RawMessage) (json.RawMessage, error) {
	schema, err := m.registry.Schema(provider)
	if err != nil {
		return nil, err
	}
	return schema.Redact(config)
}
