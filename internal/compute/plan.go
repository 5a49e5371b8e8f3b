package compute

import (
	"encoding/json"

	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// CheckPlanConfig checks the config of a plan version for the provider called name: a JSON
// object whose every key is a field of the provider's schema with a valid
// value, as the provider's defaults are checked (the fields the schema
// requires may be left to each tenant). It holds no provider choice (a
// plan's provider is the plan's) and no secret: a plan's config is shown to
// every reader and shared by all its tenants; secrets belong in each
// tenant's own compute_config. Errors are violations of kind ErrInvalidSpec
// with pointers relative to the config, or a *ProviderNotFoundError.
func (m *Manager) CheckPlanConfig(name string, config json.RawMessage) error {
	entry, err := m.registry.get(name)
	if err != nil {
		return err
	}
	fragment, err := workload.DecodeObject(config, "plan config")
	if err != nil {
		return provider.AsInvalidSpec(err)
	}
	var errs violation.List
	for _, key := range []string{wire.SelectionKey, wire.SelectionKeyType} {
		if _, ok := fragment[key]; ok {
			errs.Add("/"+key, "a plan's provider is the plan's own (%s); remove this field", name)
			delete(fragment, key)
		}
	}
	errs = append(errs, entry.schema.checkFields(fragment, "a plan")...)
	if entry.schema.MayHoldSecrets(config) {
		_, _ = entry.schema.MapSecrets(fragment, func(at string, v any) (any, error) {
			errs.Add(at, "is a secret (writeOnly): a plan is shown to every reader and shared by its tenants; set secrets in each tenant's own compute_config")
			return v, nil
		})
	}
	return errs.Err(provider.ErrInvalidSpec)
}
