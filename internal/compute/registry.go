package compute

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/jaxxstorm/landlord/internal/jsonscan"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// ProviderNotFoundError is returned when a provider name is not enabled. It
// wraps ErrProviderNotFound.
type ProviderNotFoundError struct {
	// Name is the name asked for; empty when none was given and there is no
	// default.
	Name string
	// Enabled lists the enabled providers, sorted.
	Enabled []string
	// Source and Key say where the tenant named the provider: Source is
	// "compute_config", "labels" or "annotations", Key the key there
	// (wire.SelectionKey or wire.SelectionKeyType). Both are empty when the name did
	// not come from the tenant (the default provider, a query parameter).
	Source, Key string
}

// Pointer is the JSON pointer, in the tenant, of the key that named the
// provider ("/labels/compute_provider"); "" when the tenant named none.
func (e *ProviderNotFoundError) Pointer() string {
	if e.Source == "" {
		return ""
	}
	return violation.Pointer(e.Source, e.Key)
}

func (e *ProviderNotFoundError) Error() string {
	enabled := "none are enabled"
	if len(e.Enabled) > 0 {
		enabled = "enabled: " + strings.Join(e.Enabled, ", ")
	}
	switch e.Source {
	case "labels":
		enabled = "named by the label " + e.Key + "; " + enabled
	case "annotations":
		enabled = "named by the annotation " + e.Key + "; " + enabled
	}
	if e.Name == "" {
		return fmt.Sprintf("%s: no provider chosen and no default configured; set compute_provider (%s)", provider.ErrProviderNotFound, enabled)
	}
	return fmt.Sprintf("%s: %s (%s)", provider.ErrProviderNotFound, wire.Quote(e.Name), enabled)
}

// Unwrap makes errors.Is(err, ErrProviderNotFound) hold.
func (e *ProviderNotFoundError) Unwrap() error { return provider.ErrProviderNotFound }

// Registry holds the enabled providers by name, each with its config schema
// compiled and its defaults decoded once, at registration. Providers are
// registered at start-up; a Registry is safe for concurrent use.
type Registry struct {
	mu      sync.RWMutex
	entries map[string]*registered
}

type registered struct {
	provider provider.Provider
	schema   *Schema
	// defaults are the provider's ConfigDefaults, decoded; never changed
	// (merges copy them).
	defaults map[string]any
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{entries: map[string]*registered{}}
}

// Register enables p. It compiles p's config schema and checks that its
// defaults are a JSON object whose every key is a property of the schema
// with a valid value. A second provider with the same name is an error
// wrapping ErrProviderConflict.
func (r *Registry) Register(p provider.Provider) error {
	name := p.Name()
	if !provider.ValidName(name) {
		return fmt.Errorf("compute: register provider %q: name must be lowercase alphanumeric", name)
	}
	schema, err := CompileSchema(p.ConfigSchema())
	if err != nil {
		return fmt.Errorf("compute: register provider %q: config schema: %w", name, err)
	}
	defaults, err := schema.checkDefaults(p.ConfigDefaults())
	if err != nil {
		return fmt.Errorf("compute.%s: %w", name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.entries[name]; dup {
		return fmt.Errorf("compute: register provider %q: %w", name, provider.ErrProviderConflict)
	}
	r.entries[name] = &registered{provider: p, schema: schema, defaults: defaults}
	return nil
}

// checkDefaults decodes a provider's defaults and checks each key against
// the schema's property of that name, reporting every problem with the
// pointer of its key.
func (s *Schema) checkDefaults(raw json.RawMessage) (map[string]any, error) {
	if jsonscan.IsNull(raw) {
		return map[string]any{}, nil
	}
	defaults, err := workload.DecodeObject(raw, "provider defaults")
	if err != nil {
		return nil, fmt.Errorf("defaults must be a JSON object or null: %w", err)
	}
	if err := s.checkFields(defaults, "tenant defaults").Err(provider.ErrInvalidSpec); err != nil {
		return nil, err
	}
	return defaults, nil
}

// checkFields checks each key of a fragment of config (defaults, a plan's
// config) against the schema's property of that name, reporting every
// problem with the pointer of its key: the fields the schema requires may
// be left to the tenant. what names the fragment in the message of an
// unknown key.
func (s *Schema) checkFields(fragment map[string]any, what string) violation.List {
	var errs violation.List
	for _, key := range slices.Sorted(maps.Keys(fragment)) {
		at := "/" + violation.Escape(key)
		sub, ok := s.compiled.Properties[key]
		if !ok {
			errs.Add(at, "is not a field of the config schema; %s may set any of %s", what, strings.Join(slices.Sorted(maps.Keys(s.compiled.Properties)), ", "))
			continue
		}
		errs = append(errs, prefixed(at, violationsOf(sub.Validate(fragment[key])))...)
	}
	return errs
}

// Get returns the provider called name, or a *ProviderNotFoundError.
func (r *Registry) Get(name string) (provider.Provider, error) {
	e, err := r.get(name)
	if err != nil {
		return nil, err
	}
	return e.provider, nil
}

// Schema returns the compiled config schema of the provider called name.
func (r *Registry) Schema(name string) (*Schema, error) {
	e, err := r.get(name)
	if err != nil {
		return nil, err
	}
	return e.schema, nil
}

func (r *Registry) get(name string) (*registered, error) {
	r.mu.RLock()
	e, ok := r.entries[name]
	r.mu.RUnlock()
	if !ok {
		return nil, &ProviderNotFoundError{Name: name, Enabled: r.Names()}
	}
	return e, nil
}

// Names returns the names of the registered providers, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.entries))
}

// List returns the registered providers, sorted by name.
func (r *Registry) List() []provider.Provider {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]provider.Provider, 0, len(r.entries))
	for _, name := range slices.Sorted(maps.Keys(r.entries)) {
		out = append(out, r.entries[name].provider)
	}
	return out
}

// Describe returns what discovery shows of the provider called name: its
// schema as registered, its defaults (null when it has none) and its
// capabilities (nil when it declares none).
func (r *Registry) Describe(name string) (*Description, error) {
	e, err := r.get(name)
	if err != nil {
		return nil, err
	}
	d := &Description{Name: name, Schema: e.schema.Raw(), Defaults: e.provider.ConfigDefaults()}
	if jsonscan.IsNull(d.Defaults) {
		d.Defaults = json.RawMessage("null")
	}
	if r, ok := e.provider.(provider.CapabilityReporter); ok {
		caps := r.Capabilities()
		d.Capabilities = &caps
	}
	return d, nil
}

// Description is what discovery shows of a provider.
type Description struct {
	Name     string
	Schema   json.RawMessage
	Defaults json.RawMessage
	// Capabilities is nil when the provider declares none.
	Capabilities *provider.Capabilities
}
