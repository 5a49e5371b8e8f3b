package compute

import (
	"errors"
	"fmt"

	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// selection is where a tenant's provider choice came from.
// ErrInvalidChoice means a tenant's labels or annotations choose a
// provider the tenant cannot use. It wraps ErrInvalidSpec, so it is
// terminal as well; its violations point into the tenant
// ("/labels/compute_provider"), not into its compute_config.
var ErrInvalidChoice error = &subKind{msg: "invalid compute provider choice", of: provider.ErrInvalidSpec}

// subKind is a sentinel that is also another one (errors.Is holds for
// both), with words of its own.
type subKind struct {
	msg string
	of  error
}

func (e *subKind) Error() string { return e.msg }
func (e *subKind) Unwrap() error { return e.of }

type selection struct {
	name   string
	source string // "compute_config", "labels", "annotations" or ""
	key    string // wire.SelectionKey or wire.SelectionKeyType
}

// invalid reports a problem with the choice at the key that made it: a
// violation of kind ErrInvalidSpec at the key in the compute_config, or of
// kind ErrInvalidChoice at the label or annotation (a pointer into the
// tenant, as it lies outside the compute_config).
func (s selection) invalid(format string, args ...any) error {
	if s.source == "compute_config" {
		return provider.Invalid(violation.Pointer(s.key), format, args...)
	}
	return violation.New(ErrInvalidChoice, violation.Pointer(s.source, s.key), format, args...)
}

// notFound marks a *ProviderNotFoundError with where the choice was made.
func (s selection) notFound(err error) error {
	var nf *ProviderNotFoundError
	if errors.As(err, &nf) {
		nf.Source, nf.Key = s.source, s.key
	}
	return err
}

// findSelection finds an explicit provider choice. It does not check that
// the provider exists.
func findSelection(config map[string]any, labels, annotations map[string]string) (selection, error) {
	var chosen selection
	var errs violation.List
	for _, key := range []string{wire.SelectionKey, wire.SelectionKeyType} {
		v, ok := config[key]
		if !ok {
			continue
		}
		name, isString := v.(string)
		switch {
		case !isString || name == "":
			errs.Add("/"+key, "must be the name of a compute provider")
		case chosen.name != "" && chosen.name != name:
			errs.Add("/"+key, "names provider %q but %s names %q; set one of them", name, wire.SelectionKey, chosen.name)
		default:
			chosen = selection{name: name, source: "compute_config", key: key}
		}
	}
	if err := errs.Err(provider.ErrInvalidSpec); err != nil {
		return selection{}, err
	}
	if chosen.name != "" {
		return chosen, nil
	}
	for _, set := range []struct {
		source string
		values map[string]string
	}{{"labels", labels}, {"annotations", annotations}} {
		for _, key := range []string{wire.SelectionKey, wire.SelectionKeyType} {
			if name := set.values[key]; name != "" {
				return selection{name: name, source: set.source, key: key}, nil
			}
		}
	}
	return selection{}, nil
}

func (s selection) String() string {
	if s.source == "" {
		return fmt.Sprintf("%q", s.name)
	}
	return fmt.Sprintf("%q (%s %s)", s.name, s.source, s.key)
}

// removeSelection removes the selection keys from a config: they choose the
// provider and are not part of what it gets.
func removeSelection(config map[string]any) {
	delete(config, wire.SelectionKey)
	delete(config, wire.SelectionKeyType)
}
