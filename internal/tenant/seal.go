package tenant

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// OpenStored opens, in place, the compute configs of t as the database
// holds them (the tenant's and its placements': see ReadPlacements), and
// returns the stored text of the tenant's, which a write that keeps the
// config writes again (see ToStore; each placement keeps its own). Without
// a sealer it changes nothing.
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
	for i := range t.Placements {
		p := &t.Placements[i]
		if i == 0 {
			p.stored, p.read, p.ComputeConfig = stored, plain, plain
		} else if err := openPlacement(s, t.ID, p); err != nil {
			return nil, fmt.Errorf("placement %s: %w", p.Name, err)
		}
		if p.Move != nil {
			if err := openPlacement(s, t.ID, &p.Move.Other); err != nil {
				return nil, fmt.Errorf("placement %s, its move's workload: %w", p.Name, err)
			}
		}
	}
	return stored, nil
}

// openPlacement opens p's stored config in place, keeping the stored
// text for ToStore.
func openPlacement(s Sealer, id string, p *Placement) error {
	open, err := s.Open(id, p.ComputeConfig)
	if err != nil {
		return err
	}
	p.stored, p.read, p.ComputeConfig = p.ComputeConfig, open, open
	return nil
}

// sealPlacement seals p's config in place, or puts back the stored text
// it was read from when it is unchanged.
func sealPlacement(s Sealer, id string, p *Placement) error {
	if p.stored != nil && bytes.Equal(p.ComputeConfig, p.read) {
		p.ComputeConfig = p.stored
		return nil
	}
	sealed, err := s.Seal(id, p.Provider, p.ComputeConfig)
	if err != nil {
		return err
	}
	p.ComputeConfig = sealed
	return nil
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

// ToStore returns t as it is to be written: a copy with its compute
// configs sealed (the tenant's and its placements'), or, when a config is
// still read (the plain config the tenant was read with: read and stored
// for the tenant's, which are nil for a new tenant, and kept by
// OpenStored for each placement's), with the text it was read from, so
// that a write that keeps a config (an observation, a deletion) keeps its
// sealed values as they are. Without a sealer it returns t.
func ToStore(s Sealer, t *Tenant, read, stored json.RawMessage) (*Tenant, error) {
	if s == nil {
		return t, nil
	}
	out := *t
	if t.Simple() {
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
	// Each placement keeps its own stored text, the first one's too (the
	// compute_config column): after a switch or a removal, the first
	// placement's config may read as the one before it did and be another
	// provider's, whose schema says other values are secret.
	out.Placements = clonePlacements(t.Placements)
	for i := range out.Placements {
		p := &out.Placements[i]
		if err := sealPlacement(s, t.ID, p); err != nil {
			return nil, fmt.Errorf("placement %s: %w", p.Name, err)
		}
		if i == 0 {
			out.ComputeConfig = p.ComputeConfig
		}
		if p.Move != nil {
			if err := sealPlacement(s, t.ID, &p.Move.Other); err != nil {
				return nil, fmt.Errorf("placement %s, its move's workload: %w", p.Name, err)
			}
		}
	}
	return &out, nil
}

// PlacementsText is the value of a store's placements column for t, a
// tenant as ToStore returns it: "[]" for a Simple tenant, whose columns
// say everything; else its placements, the first without its compute
// config, which is the tenant's compute_config column.
func PlacementsText(t *Tenant) (string, error) {
	if t.Simple() {
		return "[]", nil
	}
	out := clonePlacements(t.Placements)
	out[0].ComputeConfig = nil
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("tenant %s: encode placements: %w", t.ID, err)
	}
	return string(b), nil
}

// ReadPlacements sets, from the text of a store's placements column
// (PlacementsText), the placements of t, whose other columns have been
// read, and normalizes t (Normalize). Their configs are as stored:
// OpenStored opens them.
func ReadPlacements(t *Tenant, text string) error {
	t.Placements = nil
	if text != "" && text != "[]" {
		if err := json.Unmarshal([]byte(text), &t.Placements); err != nil {
			return fmt.Errorf("tenant %s: decode placements: %w", t.ID, err)
		}
		if len(t.Placements) > 0 {
			t.Placements[0].ComputeConfig = t.ComputeConfig
		}
	}
	t.Normalize()
	return nil
}

// RewritePlacements applies rewrite, as ConfigRewriter.RewriteConfigs
// does to the compute_config column, to the stored configs in the text of
// tenant id's placements column (PlacementsText), and returns the text to
// write back, or "" when rewrite changed nothing (returned nil for each).
func RewritePlacements(id, text string, rewrite func(id, provider string, stored json.RawMessage) (json.RawMessage, error)) (string, error) {
	if text == "" || text == "[]" {
		return "", nil
	}
	var ps []json.RawMessage
	if err := json.Unmarshal([]byte(text), &ps); err != nil {
		return "", fmt.Errorf("tenant %s: decode placements: %w", id, err)
	}
	changed := false
	for i := range ps {
		// The first placement's config is the compute_config column's;
		// its move's is here.
		next, err := rewritePlacement(id, ps[i], i > 0, rewrite)
		if err != nil {
			return "", fmt.Errorf("tenant %s: placement %d: %w", id, i, err)
		}
		if next != nil {
			ps[i], changed = next, true
		}
	}
	if !changed {
		return "", nil
	}
	b, err := json.Marshal(ps)
	if err != nil {
		return "", fmt.Errorf("tenant %s: encode placements: %w", id, err)
	}
	return string(b), nil
}

// rewritePlacement applies rewrite to the stored config of one placement's
// text (when config), and to its move's workload's, and returns the text
// to write back, nil when nothing changed. The text is decoded to a map of
// raw values, so that every member written by any version is kept.
func rewritePlacement(id string, raw json.RawMessage, config bool, rewrite func(id, provider string, stored json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	changed := false
	if config {
		var provider string
		if err := json.Unmarshal(fields["provider"], &provider); err != nil {
			return nil, fmt.Errorf("provider: %w", err)
		}
		next, err := rewrite(id, provider, fields["compute_config"])
		if err != nil {
			return nil, err
		}
		if next != nil {
			fields["compute_config"], changed = next, true
		}
	}
	if move, ok := fields["move"]; ok && string(move) != "null" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(move, &m); err != nil {
			return nil, fmt.Errorf("move: %w", err)
		}
		other, err := rewritePlacement(id, m["other"], true, rewrite)
		if err != nil {
			return nil, fmt.Errorf("move: %w", err)
		}
		if other != nil {
			m["other"] = other
			if fields["move"], err = json.Marshal(m); err != nil {
				return nil, err
			}
			changed = true
		}
	}
	if !changed {
		return nil, nil
	}
	return json.Marshal(fields)
}
