package provider

import (
	"encoding/json"

	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// DecodeOptions decodes a resolved config into dst, a provider's options,
// for its DecodeConfig. A value that does not fit dst is a violation of
// kind ErrInvalidSpec at its pointer, worded without Go's type names ("must
// be an integer from 0 to 255"); what names the options in other errors.
func DecodeOptions(config json.RawMessage, dst any, what string) error {
	return decodeFailure(config, json.Unmarshal(config, dst), what)
}

// decodeFailure words an error of decoding config, or returns nil.
func decodeFailure(config json.RawMessage, err error, what string) error {
	if err == nil {
		return nil
	}
	if v := violation.Of(workload.DecodeError(config, err)); v != nil {
		return violation.List(v).Err(ErrInvalidSpec)
	}
	return Invalid("", "cannot read the %s: %v", what, err)
}
