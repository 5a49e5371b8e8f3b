package compute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// ResolveRequest is a tenant's desired compute state as stored or as sent to
// the API.
type ResolveRequest struct {
	TenantID   string
	TenantName string
	Generation int64
	// ComputeConfig is the tenant's compute_config, a JSON object.
	ComputeConfig json.RawMessage
	Labels        map[string]string
	Annotations   map[string]string
	// Provider is the provider already recorded for the tenant, or empty for
	// a new tenant. A config that chooses another provider is refused: a
	// tenant never moves between providers silently.
	Provider string
}

// Resolution is a tenant's compute config made ready for its provider.
type Resolution struct {
	// Provider is the chosen provider's name.
	Provider string
	// EffectiveConfig is the merged config handed to the provider: defaults
	// under tenant values, selection keys removed. It may hold secrets; see
	// Manager.RedactConfig.
	EffectiveConfig json.RawMessage
	// Spec is the validated spec for the provider.
	Spec *TenantComputeSpec
}

// Resolve chooses the tenant's provider, merges the provider's defaults under
// the tenant's compute_config, validates the result against the provider's
// schema and then with its ValidateConfig and Validate, and builds the spec.
// Errors are a *ProviderNotFoundError or a *ValidationError. Pointers from
// the schema, the selection and ValidateConfig are relative to the
// compute_config ("" when the problem is in the labels or annotations);
// those from Validate name fields of the spec built from it.
func (m *Manager) Resolve(ctx context.Context, req ResolveRequest) (*Resolution, error) {
	config, err := decodeObject(req.ComputeConfig, "compute config")
	if err != nil {
		return nil, err
	}
	chosen, err := selectProvider(config, req.Labels, req.Annotations)
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
	// Merge even without defaults: the patch semantics drop the tenant's
	// nulls, so null means "absent" whatever the operator configured.
	defaults := map[string]any{}
	if raw := entry.provider.ConfigDefaults(); !isNull(raw) {
		if defaults, err = decodeObject(raw, "provider defaults"); err != nil {
			return nil, fmt.Errorf("compute: provider %s: %w", name, err)
		}
	}
	merged := MergePatch(defaults, config).(map[string]any)
	if err := entry.schema.validateValue(merged); err != nil {
		return nil, err
	}
	effective, err := json.Marshal(merged)
	if err != nil {
		return nil, fmt.Errorf("compute: encode effective config: %w", err)
	}
	if err := entry.provider.ValidateConfig(effective); err != nil {
		return nil, validationFailure(name, err)
	}
	spec := &TenantComputeSpec{
		TenantID:       req.TenantID,
		TenantName:     req.TenantName,
		ProviderType:   name,
		Generation:     req.Generation,
		ProviderConfig: effective,
	}
	if w, err := DecodeWorkload(effective); err == nil && w.Image != "" {
		w.Apply(spec)
	}
	if err := entry.provider.Validate(ctx, spec); err != nil {
		return nil, validationFailure(name, err)
	}
	return &Resolution{Provider: name, EffectiveConfig: effective, Spec: spec}, nil
}

// providerFor applies the selection rules: an explicit choice, else the
// tenant's recorded provider, else the default.
func (m *Manager) providerFor(chosen selection, recorded string) (string, error) {
	switch {
	case chosen.name != "" && recorded != "" && chosen.name != recorded:
		return "", Invalid(chosen.pointer(), "the tenant runs on provider %q and cannot move to %s; delete and re-create it to change provider", recorded, chosen)
	case chosen.name != "":
		if _, err := m.registry.get(chosen.name); err != nil {
			return "", err
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

// validationFailure passes on a provider's verdict. A problem with the input
// already wraps ErrInvalidSpec; anything else (the platform did not answer a
// read-only check) keeps its chain and its retry mark.
func validationFailure(provider string, err error) error {
	if errors.Is(err, ErrInvalidSpec) {
		return err
	}
	return fmt.Errorf("compute: %s could not validate the config: %w", provider, err)
}

// RedactConfig returns config with the values that the provider's schema
// marks writeOnly replaced by RedactedValue.
func (m *Manager) RedactConfig(provider string, config json.RawMessage) (json.RawMessage, error) {
	schema, err := m.registry.Schema(provider)
	if err != nil {
		return nil, err
	}
	return schema.Redact(config)
}

// KeepSecrets returns next with the secret values that read RedactedValue
// taken from prev; see Schema.KeepSecrets.
func (m *Manager) KeepSecrets(provider string, next, prev json.RawMessage) (json.RawMessage, error) {
	schema, err := m.registry.Schema(provider)
	if err != nil {
		return nil, err
	}
	return schema.KeepSecrets(next, prev)
}
