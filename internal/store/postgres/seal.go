package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// scanOpen reads a tenant's row and opens the sealed values of its
// compute_config (Options.Sealer); it returns the stored text too, which a
// write that keeps the config writes again.
func (s *Store) scanOpen(row pgx.Row) (*tenant.Tenant, json.RawMessage, error) {
	t, err := scanTenant(row)
	if err != nil {
		return nil, nil, err
	}
	stored, err := tenant.OpenStored(s.sealer, t)
	if err != nil {
		return nil, nil, err
	}
	return t, stored, nil
}

const (
	selectConfigs = `SELECT id, provider, compute_config, placements FROM tenants WHERE id > $1 ORDER BY id LIMIT $2 FOR UPDATE`
	// rewriteConfig writes a tenant's compute_config ($2) and placements
	// ($3), each when it is not NULL.
	rewriteConfig = `UPDATE tenants SET compute_config = coalesce($2, compute_config), placements = coalesce($3, placements) WHERE id = $1`
)

// RewriteConfigs implements tenant.ConfigRewriter: the rows of a batch are
// locked (SELECT … FOR UPDATE) until their new configs commit, in one
// round trip. The configs of a tenant's placements other than the first,
// in its placements column, are passed to rewrite too, after the tenant's
// own (tenant.RewritePlacements).
func (s *Store) RewriteConfigs(ctx context.Context, after string, limit int, rewrite func(id, provider string, stored json.RawMessage) (json.RawMessage, error)) (string, error) {
	from := after
	switch {
	case from == "":
		from = minID
	case !tenant.IsID(from):
		return "", fmt.Errorf("postgres: rewrite configs: %w: after %q is not a tenant id", tenant.ErrInvalidPageToken, after)
	}
	if limit <= 0 {
		limit = tenant.DefaultRewriteBatch
	}
	var last string
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		last = ""
		rows, err := tx.Query(ctx, selectConfigs, from, limit)
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		type row struct {
			id, provider, placements string
			config                   []byte
		}
		batch, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var out row
			err := r.Scan(&out.id, &out.provider, &out.config, &out.placements)
			return out, err
		})
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		b := &pgx.Batch{}
		for _, r := range batch {
			var compact bytes.Buffer // as scanTenant returns it
			if err := json.Compact(&compact, r.config); err != nil {
				return fmt.Errorf("tenant %s: compute_config: %w", r.id, err)
			}
			out, err := rewrite(r.id, r.provider, compact.Bytes())
			if err != nil {
				return err
			}
			placements, err := tenant.RewritePlacements(r.id, r.placements, rewrite)
			if err != nil {
				return err
			}
			var config, placed any // NULL: unchanged
			if out != nil {
				config = []byte(out)
			}
			if placements != "" {
				placed = placements
			}
			if config != nil || placed != nil {
				b.Queue(rewriteConfig, r.id, config, placed)
			}
			last = r.id
		}
		if b.Len() == 0 {
			return nil
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return "", fmt.Errorf("postgres: rewrite configs: %w", err)
	}
	return last, nil
}

var _ tenant.ConfigRewriter = (*Store)(nil)
