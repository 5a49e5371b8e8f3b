package seal

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Counts are what a rotation did to the sealed and secret values of
// configs.
type Counts struct {
	// Current values were sealed with the primary key already: they are
	// kept as they were (after checking that they open).
	Current int
	// Resealed values were sealed with another key: they are sealed again
	// with the primary.
	Resealed int
	// Sealed secrets were stored in plain text: they are sealed.
	Sealed int
	// Opened values were sealed: they are stored in plain text (Decrypt).
	Opened int
}

func (c *Counts) add(o Counts) {
	c.Current += o.Current
	c.Resealed += o.Resealed
	c.Sealed += o.Sealed
	c.Opened += o.Opened
}

// ErrNoSchema: the provider's config schema is not known, so the secrets
// of a config stored in plain text cannot be found; its sealed values are
// rotated all the same.
var ErrNoSchema = errors.New("the provider's config schema is not known here")

// Reseal returns stored, the compute_config of tenant id on provider as
// the database holds it, with every value sealed with the primary key:
// values sealed with it are kept, those sealed with another key are sealed
// again, and secrets stored in plain text are sealed. With decrypt every
// sealed value is stored in plain text instead. It returns nil when
// nothing changes. When the provider's schema is not known, sealed values
// are rotated and the error wraps ErrNoSchema, with the config to store.
// A value that does not open is an error, as Open's.
func (c *Configs) Reseal(id, provider string, stored json.RawMessage, decrypt bool) (json.RawMessage, Counts, error) {
	var n Counts
	if err := c.canReseal(decrypt); err != nil {
		return nil, n, err
	}
	var schema *compute.Schema
	var noSchema error
	if !decrypt {
		var err error
		if schema, err = c.schemas.Schema(provider); err != nil {
			noSchema = fmt.Errorf("seal: tenant %s: %w (%w); its secrets stored in plain text, if any, stay so", id, ErrNoSchema, err)
		}
	}
	sealedText := bytes.Contains(stored, prefixBytes)
	if !sealedText && (decrypt || schema == nil || !schema.MayHoldSecrets(stored)) {
		return nil, n, noSchema
	}
	v, err := workload.DecodeValue(stored, "stored compute config")
	if err != nil {
		return nil, n, fmt.Errorf("seal: tenant %s: %w", id, err)
	}
	// The secrets first, with the schema: each is sealed with the primary
	// key unless it is already.
	if schema != nil {
		v, err = schema.MapSecrets(v, func(ptr string, val any) (any, error) {
			if s, ok := val.(string); ok && IsSealed(s) {
				return c.reseal(id, ptr, s, &n)
			}
			val, err := mapStrings(val, nil, func(inner []string, s string) (any, error) {
				if IsSealed(s) { // in a value sealed whole now: open it first
					return c.open(id, ptr+pointer(inner), s)
				}
				return s, nil
			})
			if err != nil {
				return nil, err
			}
			n.Sealed++
			return c.sealAt(id, ptr, val)
		})
		if err != nil {
			return nil, n, err
		}
	}
	// Then every other sealed value: where the schema no longer has a
	// secret, or when it is not known, or to open them all.
	v, err = mapStrings(v, nil, func(path []string, s string) (any, error) {
		switch {
		case !IsSealed(s):
			return s, nil
		case decrypt:
			n.Opened++
			return c.open(id, pointer(path), s)
		default:
			return c.reseal(id, pointer(path), s, &n)
		}
	})
	if err != nil {
		return nil, n, err
	}
	if n.Resealed+n.Sealed+n.Opened == 0 {
		return nil, n, noSchema
	}
	out, err := encode(v)
	if err != nil {
		return nil, n, err
	}
	return out, n, noSchema
}

// canReseal refuses to seal again without a primary key; decrypt needs
// none.
func (c *Configs) canReseal(decrypt bool) error {
	if !decrypt && c.keys.Primary() == "" {
		return fmt.Errorf("seal: %w to seal with: set encryption.primary, or store secrets in plain text with --decrypt", ErrNoPrimary)
	}
	return nil
}

// reseal returns s, sealed at ptr, as it is when the primary key sealed
// it, and sealed again with the primary key otherwise.
func (c *Configs) reseal(id, ptr, s string, n *Counts) (any, error) {
	val, err := c.open(id, ptr, s)
	if err != nil {
		return nil, err
	}
	if kid, _ := KeyOf(s); kid == c.keys.Primary() {
		n.Current++
		return sealedString(s), nil
	}
	n.Resealed++
	return c.sealAt(id, ptr, val)
}

// RotateOptions tune Rotate.
type RotateOptions struct {
	// Decrypt stores every sealed value in plain text instead.
	Decrypt bool
	// DryRun counts what would change and writes nothing.
	DryRun bool
	// BatchSize is how many tenants one transaction rewrites; 0 means
	// DefaultBatchSize.
	BatchSize int
}

// DefaultBatchSize is RotateOptions.BatchSize when it is 0: the stores'
// own default batch.
const DefaultBatchSize = tenant.DefaultRewriteBatch

// Stats are what Rotate found and did.
type Stats struct {
	// Tenants were read, deleted ones included.
	Tenants int
	// Rewritten tenants had their stored config written (or would have,
	// with DryRun).
	Rewritten int
	// Counts sums the values of every config.
	Counts
	// NoSchema counts, by provider, the tenants whose provider's schema is
	// not known here: their sealed values were rotated, but secrets stored
	// in plain text, if any, could not be found.
	NoSchema map[string]int
	// Failed holds, for each tenant whose config could not be rotated (a
	// value that does not open), the error naming it; those tenants are
	// left as they were.
	Failed []error
}

// Rotate seals every tenant's stored compute_config again with c's
// primary key (see Reseal), a batch of tenants per transaction, through a
// store's ConfigRewriter, the configs of tenants' placements and moves
// with the tenant's own. It is safe beside a running landlord (the rows
// of a batch are locked while they are rewritten, and nothing that a
// tenant means changes) and idempotent: a second run finds every value
// current and writes nothing. A tenant a value of which does not open is
// recorded in Stats.Failed, and the config holding that value skipped
// (its other configs are rotated); an error of the store ends the
// rotation.
func Rotate(ctx context.Context, store tenant.ConfigRewriter, c *Configs, opts RotateOptions) (Stats, error) {
	stats := Stats{NoSchema: map[string]int{}}
	if err := c.canReseal(opts.Decrypt); err != nil {
		return stats, err
	}
	size := opts.BatchSize
	if size <= 0 {
		size = DefaultBatchSize
	}
	type result struct {
		counts    Counts
		rewritten bool
		noSchema  string
		err       error
	}
	// A config is one of a tenant's: its compute_config, and those of its
	// placements and their moves, each passed to rewrite.
	type config struct{ id, provider, stored string }
	for after := ""; ; {
		// A retried transaction calls rewrite again for the same configs:
		// the last call's result is the one that counts. (Two configs of
		// one tenant stored as the same text count once.)
		batch := map[config]result{}
		last, err := store.RewriteConfigs(ctx, after, size, func(id, provider string, stored json.RawMessage) (json.RawMessage, error) {
			key := config{id, provider, string(stored)}
			out, n, err := c.Reseal(id, provider, stored, opts.Decrypt)
			r := result{counts: n, rewritten: out != nil}
			switch {
			case errors.Is(err, ErrNoSchema):
				r.noSchema = provider
			case err != nil:
				batch[key] = result{err: err}
				return nil, nil
			}
			batch[key] = r
			if opts.DryRun {
				return nil, nil
			}
			return out, nil
		})
		if err != nil {
			return stats, fmt.Errorf("seal: rotate after tenant %q: %w", after, err)
		}
		// Each tenant counts once: failed when a config of it failed
		// (its other configs are rotated), rewritten when one was.
		tenants := map[string][]result{}
		for _, key := range slices.SortedFunc(maps.Keys(batch), func(a, b config) int {
			return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.provider, b.provider), cmp.Compare(a.stored, b.stored))
		}) {
			tenants[key.id] = append(tenants[key.id], batch[key])
		}
		for _, id := range slices.Sorted(maps.Keys(tenants)) {
			stats.Tenants++
			var failed, rewritten bool
			noSchema := map[string]bool{}
			for _, r := range tenants[id] {
				if r.err != nil {
					if !failed {
						stats.Failed = append(stats.Failed, r.err)
					}
					failed = true
					continue
				}
				stats.Counts.add(r.counts)
				rewritten = rewritten || r.rewritten
				if r.noSchema != "" {
					noSchema[r.noSchema] = true
				}
			}
			if rewritten && !failed {
				stats.Rewritten++
			}
			for p := range noSchema {
				stats.NoSchema[p]++
			}
		}
		if last == "" {
			return stats, nil
		}
		after = last
		if err := ctx.Err(); err != nil {
			return stats, err
		}
	}
}
