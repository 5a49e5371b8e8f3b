package provider

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// DecodeSpec runs the checks of a merged config that come after its
// schema, as a host's resolution does: the portable workload, when the
// config has one (hasWorkload), is decoded into spec and checked (its rules
// and p's capabilities), then p decodes and checks its own fields
// (ConfigDecoder, else ValidateConfig). Every problem is reported at once,
// as violations of kind ErrInvalidSpec.
func DecodeSpec(p Provider, config json.RawMessage, hasWorkload bool, spec *TenantComputeSpec) error {
	var errs violation.List
	if hasWorkload {
		w, err := workload.Decode(config)
		if err != nil {
			return decodeFailure(config, err, "workload")
		}
		errs = append(errs, w.Check()...)
		spec.Workload = w.Workload()
		errs = append(errs, checkCapabilities(p, spec.Workload)...)
	}
	var err error
	if d, ok := p.(ConfigDecoder); ok {
		err = d.DecodeConfig(config, spec)
	} else {
		err = p.ValidateConfig(config)
	}
	if err != nil {
		v := violation.Of(err)
		if v == nil {
			return validationFailure(p.Name(), err)
		}
		errs = append(errs, v...)
	}
	return errs.Err(ErrInvalidSpec)
}

// DecodingProvider is a Provider with a ConfigDecoder.
type DecodingProvider interface {
	Provider
	ConfigDecoder
}

// CheckConfig runs on a merged config the checks Resolve runs after the
// schema (the portable workload's rules and p's capabilities, then p's
// DecodeConfig) and returns violations of kind ErrInvalidSpec, or nil.
// Providers with a ConfigDecoder implement ValidateConfig with it.
func CheckConfig(p DecodingProvider, config json.RawMessage) error {
	obj, err := workload.DecodeObject(config, "compute config")
	if err != nil {
		return AsInvalidSpec(err)
	}
	_, hasWorkload := obj["image"]
	return DecodeSpec(p, config, hasWorkload, &TenantComputeSpec{TenantID: "validate", ProviderType: p.Name()})
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
