package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// scanOpen reads a tenant's row and opens the sealed values of its
// compute_config (Options.Sealer); it returns the stored text too, which a
// write that keeps the config writes again.
func (s *Store) scanOpen(row scanner) (*tenant.Tenant, json.RawMessage, error) {
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
	selectConfigs = `SELECT id, provider, compute_config, placements FROM tenants WHERE id > ? ORDER BY id LIMIT ?`
	// rewriteConfig writes a tenant's compute_config (?1) and placements
	// (?2), each when it is not NULL.
	rewriteConfig = `UPDATE tenants SET compute_config = coalesce(?1, compute_config), placements = coalesce(?2, placements) WHERE id = ?3`
)

// RewriteConfigs rewrites stored compute configs in place; see
// tenant.ConfigRewriter. The configs of a tenant's placements other than
// the first, in its placements column, are passed to rewrite too, after
// the tenant's own (tenant.RewritePlacements). The batch is one write of
// the writer: other writes wait for it, and rewrite runs on the writer's
// goroutine.
func (s *Store) RewriteConfigs(ctx context.Context, after string, limit int, rewrite func(id, provider string, stored json.RawMessage) (json.RawMessage, error)) (string, error) {
	if after != "" && !tenant.IsID(after) {
		return "", fmt.Errorf("sqlite: rewrite configs: %w: after %q is not a tenant id", tenant.ErrInvalidPageToken, after)
	}
	if limit <= 0 {
		limit = tenant.DefaultRewriteBatch
	}
	type row struct{ id, provider, config, placements string }
	var last string
	err := s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		last = ""
		read, err := s.txStmt(ctx, tx, selectConfigs)
		if err != nil {
			return err
		}
		rows, err := read.QueryContext(ctx, after, limit)
		if err != nil {
			return fmt.Errorf("sqlite: rewrite configs: read: %w", err)
		}
		var batch []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.provider, &r.config, &r.placements); err != nil {
				rows.Close()
				return fmt.Errorf("sqlite: rewrite configs: read: %w", err)
			}
			batch = append(batch, r)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("sqlite: rewrite configs: read: %w", err)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("sqlite: rewrite configs: read: %w", err)
		}
		write, err := s.txStmt(ctx, tx, rewriteConfig)
		if err != nil {
			return err
		}
		for _, r := range batch {
			out, err := rewrite(r.id, r.provider, json.RawMessage(r.config))
			if err != nil {
				return err
			}
			var config, placed any // NULL: unchanged
			if out != nil {
				if !json.Valid(out) {
					return fmt.Errorf("sqlite: rewrite config of tenant %s: %w: the new config is not JSON", r.id, tenant.ErrInvalid)
				}
				config = string(out)
			}
			// A placement's new config that is not JSON fails the encoding
			// of the placements.
			placements, err := tenant.RewritePlacements(r.id, r.placements, rewrite)
			if err != nil {
				return err
			}
			if placements != "" {
				placed = placements
			}
			if config != nil || placed != nil {
				if _, err := write.ExecContext(ctx, config, placed, r.id); err != nil {
					return fmt.Errorf("sqlite: rewrite config of tenant %s: %w", r.id, err)
				}
			}
			last = r.id
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return last, nil
}

var _ tenant.ConfigRewriter = (*Store)(nil)
