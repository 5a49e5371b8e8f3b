package seal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Schemas finds the config schema of a compute provider; a
// *compute.Registry is one.
type Schemas interface {
	Schema(provider string) (*compute.Schema, error)
}

// Configs seals and opens the secrets of tenants' compute configs with a
// keyring: it is the tenant.Sealer of the stores. Safe for concurrent use.
type Configs struct {
	keys    *Keyring
	schemas Schemas
}

// NewConfigs returns the Configs of keys, which finds where secrets are in
// a config with the schema schemas has for the tenant's provider.
func NewConfigs(keys *Keyring, schemas Schemas) *Configs {
	return &Configs{keys: keys, schemas: schemas}
}

// sealedString is a value Seal made: a string, told apart from those of
// the config while it is walked.
type sealedString string

var prefixBytes = []byte(Prefix)

// Seal returns config, the compute_config of tenant id on provider, as it
// is to be stored: with the primary key, every secret (what the provider's
// schema marks writeOnly, found as compute.Schema.MapSecrets finds it)
// sealed in place; without one, as it is. A string of the config, secret
// or not, that begins with Prefix (a value copied from a database dump,
// say) is refused with a violation of kind compute.ErrInvalidSpec at
// its pointer, since it would read back as a sealed value.
func (c *Configs) Seal(id, providerName string, config json.RawMessage) (json.RawMessage, error) {
	reserved := bytes.Contains(config, prefixBytes) || bytes.IndexByte(config, '\\') >= 0 // an escape may spell the prefix
	primary := c.keys.Primary() != ""
	var schema *compute.Schema
	if primary {
		var err error
		if schema, err = c.schemas.Schema(providerName); err != nil {
			return nil, fmt.Errorf("seal: seal the secrets of tenant %s: %w", id, err)
		}
		primary = schema.MayHoldSecrets(config)
	}
	if !primary && !reserved {
		return config, nil // nothing to seal, nothing to refuse: most configs
	}
	v, err := workload.DecodeValue(config, "compute config")
	if err != nil {
		return nil, fmt.Errorf("seal: tenant %s: %w", id, err)
	}
	// The plain config is checked before anything is sealed: a secret
	// that begins with the prefix would read back as sealed once stored in
	// plain text (secrets rotate --decrypt).
	if reserved {
		var errs violation.List
		_, _ = mapStrings(v, nil, func(path []string, s string) (any, error) {
			if IsSealed(s) {
				errs.Add(pointer(path), "begins with %q, which landlord keeps for the secrets it seals; a value may not begin so", Prefix)
			}
			return s, nil
		})
		if err := errs.Err(provider.ErrInvalidSpec); err != nil {
			return nil, err
		}
	}
	if primary {
		v, err = schema.MapSecrets(v, func(ptr string, val any) (any, error) {
			return c.sealAt(id, ptr, val)
		})
		if err != nil {
			return nil, err
		}
	}
	return encode(v)
}

// sealAt seals val, the secret at ptr of tenant id's config, with the
// primary key.
func (c *Configs) sealAt(id, ptr string, val any) (any, error) {
	plain, err := encode(val)
	if err != nil {
		return nil, err
	}
	sealed, err := c.keys.Seal(plain, valueContext(id, ptr))
	if err != nil {
		return nil, fmt.Errorf("seal: seal %s of tenant %s: %w", ptr, id, err)
	}
	return sealedString(sealed), nil
}

// Open returns a stored compute_config of tenant id with every sealed
// value opened, wherever it is (the schema that had it sealed may have
// changed since). A value that does not open is an error naming the tenant
// and the value's pointer, wrapping ErrUnknownKey, ErrDecrypt or
// ErrMalformed: a sealed value is never passed on as if it were the
// secret.
func (c *Configs) Open(id string, stored json.RawMessage) (json.RawMessage, error) {
	if !bytes.Contains(stored, prefixBytes) {
		return stored, nil
	}
	v, err := workload.DecodeValue(stored, "stored compute config")
	if err != nil {
		return nil, fmt.Errorf("seal: tenant %s: %w", id, err)
	}
	n := 0
	v, err = mapStrings(v, nil, func(path []string, s string) (any, error) {
		if !IsSealed(s) {
			return s, nil
		}
		n++
		return c.open(id, pointer(path), s)
	})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return stored, nil
	}
	return encode(v)
}

// open returns the value sealed in s at ptr of tenant id's config.
func (c *Configs) open(id, ptr, s string) (any, error) {
	plain, err := c.keys.Open(s, valueContext(id, ptr))
	if err != nil {
		return nil, fmt.Errorf("seal: %w: the secret at %s of tenant %s: %w", tenant.ErrSecretUnreadable, ptr, id, err)
	}
	if len(plain) > 0 && plain[0] == '"' { // most secrets: a string, decoded at a fraction of the cost
		var str string
		if err := json.Unmarshal(plain, &str); err == nil {
			return str, nil
		}
	}
	v, err := workload.DecodeValue(plain, "sealed value")
	if err != nil {
		return nil, fmt.Errorf("seal: the secret at %s of tenant %s: %w: %w", ptr, id, ErrMalformed, err)
	}
	return v, nil
}

// valueContext binds a sealed value to its tenant and its place.
func valueContext(id, ptr string) []byte {
	return []byte(id + "\x00" + ptr)
}

// mapStrings calls fn with the path (escaped reference tokens, see
// pointer) and text of every string value in v (not object keys, not the
// strings Seal made) and puts what fn returns in its place. path is v's.
func mapStrings(v any, path []string, fn func(path []string, s string) (any, error)) (any, error) {
	switch v := v.(type) {
	case string:
		return fn(path, v)
	case map[string]any:
		for k, child := range v {
			out, err := mapStrings(child, append(path, violation.Escape(k)), fn)
			if err != nil {
				return nil, err
			}
			v[k] = out
		}
	case []any:
		for i, child := range v {
			out, err := mapStrings(child, append(path, strconv.Itoa(i)), fn)
			if err != nil {
				return nil, err
			}
			v[i] = out
		}
	}
	return v, nil
}

func pointer(path []string) string {
	if len(path) == 0 {
		return ""
	}
	return "/" + strings.Join(path, "/")
}

// encode is compact JSON of v, with <, > and & as they are.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("seal: encode: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

var _ tenant.Sealer = (*Configs)(nil)
