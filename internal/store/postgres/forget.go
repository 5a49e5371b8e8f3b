package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Forget implements tenant.Forgetter with tenant.ApplyForget. It returns
// errors wrapping tenant.ErrNotFound or tenant.ErrConflict. The change is
// announced to watchers when it commits.
func (s *Store) Forget(ctx context.Context, id string, version int64, actor, message string) (*tenant.Tenant, error) {
	return s.change(ctx, "forget", id, true, 0, func(cur *tenant.Tenant, now time.Time) (*tenant.Tenant, []tenant.Event, error) {
		return tenant.ApplyForget(cur, version, actor, message, now)
	})
}

// countByProvider counts live tenants by provider: a tenant of one
// placement under its provider column, a tenant of several once under
// each provider of its placements (tenants_placed_idx finds them).
const countByProvider = `SELECT provider, count(*) FROM (
	SELECT provider FROM tenants WHERE deleted_at IS NULL AND placements = '[]'
	UNION ALL
	SELECT p.provider FROM tenants t,
		LATERAL (SELECT DISTINCT e->>'provider' AS provider FROM jsonb_array_elements(t.placements::jsonb) e) p
	WHERE t.deleted_at IS NULL AND t.placements <> '[]'
) counted GROUP BY provider`

// CountByProvider counts the tenants that are not deleted, by compute
// provider; see tenant.ProviderCounter.
func (s *Store) CountByProvider(ctx context.Context) (map[string]int, error) {
	rows, err := s.pool.Query(ctx, countByProvider)
	if err != nil {
		return nil, fmt.Errorf("postgres: count tenants by provider: %w", unavailable(err))
	}
	out := map[string]int{}
	var provider string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&provider, &n}, func() error {
		out[provider] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: count tenants by provider: %w", unavailable(err))
	}
	return out, nil
}

var (
	_ tenant.Forgetter       = (*Store)(nil)
	_ tenant.ProviderCounter = (*Store)(nil)
)
