package compute

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// ProviderNotFoundError is returned when a provider name is not enabled. It
// wraps ErrProviderNotFound.
type ProviderNotFoundError struct {
	// Name is the name asked for; empty when none was given and there is no
	// default.
	Name string
	// Enabled lists the enabled providers, sorted.
	Enabled []string
}

func (e *ProviderNotFoundError) Error() string {
	enabled := "none are enabled"
	if len(e.Enabled) > 0 {
		enabled = "enabled: " + strings.Join(e.Enabled, ", ")
	}
	if e.Name == "" {
		return fmt.Sprintf("%s: no provider chosen and no default configured; set compute_provider (%s)", ErrProviderNotFound, enabled)
	}
	return fmt.Sprintf("%s: %q (%s)", ErrProviderNotFound, e.Name, enabled)
}

// Unwrap makes errors.Is(err, ErrProviderNotFound) hold.
func (e *ProviderNotFoundError) Unwrap() error { return ErrProviderNotFound }

var providerName = regexp.MustCompile(`^[a-z][a-z0-9]*$`)

// Registry holds the enabled providers by name, with their compiled config
// schemas. Providers are registered at start-up; a Registry is safe for
// concurrent use.
type Registry struct {
	mu      sync.RWMutex
	entries map[string]*registered
}

type registered struct {
	provider Provider
	schema   *Schema
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{entries: map[string]*registered{}}
}

// Register enables p. It compiles p's config schema once and checks that
// its defaults are a JSON object or null. A second provider with the same
// name is an error wrapping ErrProviderConflict.
func (r *Registry) Register(p Provider) error {
	name := p.Name()
	if !providerName.MatchString(name) {
		return fmt.Errorf("compute: register provider %q: name must be lowercase alphanumeric", name)
	}
	schema, err := CompileSchema(p.ConfigSchema())
	if err != nil {
		return fmt.Errorf("compute: register provider %q: config schema: %w", name, err)
	}
	if d := bytes.TrimSpace(p.ConfigDefaults()); len(d) > 0 && !bytes.Equal(d, []byte("null")) {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(d, &obj); err != nil {
			return fmt.Errorf("compute: register provider %q: defaults must be a JSON object or null: %w", name, err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.entries[name]; dup {
		return fmt.Errorf("compute: register provider %q: %w", name, ErrProviderConflict)
	}
	r.entries[name] = &registered{provider: p, schema: schema}
	return nil
}

// Get returns the provider called name, or a *ProviderNotFoundError.
func (r *Registry) Get(name string) (Provider, error) {
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
	names := make([]string, 0, len(r.entries))
	for name := range r.entries {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// List returns the registered providers, sorted by name.
func (r *Registry) List() []Provider {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Provider, 0, len(r.entries))
	for _, e := range r.entries {
		out = append(out, e.provider)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}
