package tenant

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
)

// Sealer seals the secret values of compute configs for storage and opens
// them when they are read, so that the database holds no secret in plain
// text (internal/seal implements it). A store given one seals every
// compute_config it writes and opens every one it reads: its callers see
// plain configs. Implementations are safe for concurrent use.
type Sealer interface {
	// Seal returns config, the compute_config of tenant id on provider,
	// as it is to be stored. A config that cannot be stored safely is
	// refused with violations of kind compute.ErrInvalidSpec.
	Seal(id, provider string, config json.RawMessage) (json.RawMessage, error)
	// Open returns a stored compute_config of tenant id with its sealed
	// values opened. A value that does not open (its key is not
	// configured, it was altered or moved) is an error that names the
	// tenant, the value and what to do.
	Open(id string, stored json.RawMessage) (json.RawMessage, error)
}

// ConfigRewriter is implemented by stores that can rewrite the stored text
// of compute configs in place, for the rotation of the keys that seal
// their secrets (seal.Rotate).
type ConfigRewriter interface {
	// RewriteConfigs passes to rewrite the id, provider and stored
	// compute_config (as the database holds it: secrets sealed) of at most
	// limit tenants (DefaultRewriteBatch when 0 or less), deleted ones
	// included, in id order after after ("" for the first), and writes
	// back every config rewrite returns that is not nil, in one
	// transaction that holds the rows: a concurrent write to one of them
	// waits, and is not lost. Nothing else of a tenant
	// changes: not its generation, version or updated_at; no event is
	// recorded and no watcher told, since what the config means is the
	// same. An error of rewrite writes nothing and is returned; rewrite may
	// be called again for a tenant when the transaction is retried. It
	// returns the last id passed, "" when there was none. after must be ""
	// or a tenant id (else ErrInvalidPageToken).
	RewriteConfigs(ctx context.Context, after string, limit int, rewrite func(id, provider string, stored json.RawMessage) (json.RawMessage, error)) (last string, err error)
}

// DefaultRewriteBatch is the batch of RewriteConfigs given a limit of 0 or
// less: small enough that a transaction holds its rows for milliseconds.
const DefaultRewriteBatch = 100

// OpenStored opens, in place, the compute_config of t as the database
// holds it, and returns the stored text, which a write that keeps the
// config writes again (see ToStore). Without a sealer it changes nothing.
func OpenStored(s Sealer, t *Tenant) (json.RawMessage, error) {
	stored := t.ComputeConfig
	if s == nil {
		return stored, nil
	}
	plain, err := s.Open(t.ID, stored)
	if err != nil {
		return nil, err
	}
	t.ComputeConfig = plain
	return stored, nil
}

// OpenListed opens, in place, the compute_config of t, a tenant of a
// listing, as OpenStored does; except that a config whose secrets do not
// open (ErrSecretUnreadable: their key is not configured) is left as
// stored, sealed. A listing shows such a tenant, whose secrets it redacts
// anyway, instead of failing for every tenant; reading or changing the
// tenant itself reports the error.
func OpenListed(s Sealer, t *Tenant) error {
	if _, err := OpenStored(s, t); err != nil && !errors.Is(err, ErrSecretUnreadable) {
		return err
	}
	return nil
}

// ToStore returns t as it is to be written: a copy with its compute_config
// sealed, or, when the config is still read (the plain config the tenant
// was read with), with stored, the text it was read from, so that a write
// that keeps the config (an observation, a deletion) keeps its sealed
// values as they are. Without a sealer it returns t. read and stored are
// nil for a new tenant.
func ToStore(s Sealer, t *Tenant, read, stored json.RawMessage) (*Tenant, error) {
	if s == nil {
		return t, nil
	}
	out := *t
	if stored != nil && bytes.Equal(t.ComputeConfig, read) {
		out.ComputeConfig = stored
		return &out, nil
	}
	sealed, err := s.Seal(t.ID, t.Provider, t.ComputeConfig)
	if err != nil {
		return nil, err
	}
	out.ComputeConfig = sealed
	return &out, nil
}
