package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Forget deletes a tenant's record at once, destroying nothing; see
// tenant.Forgetter.
func (s *Store) Forget(ctx context.Context, id string, version int64, actor, message string) (*tenant.Tenant, error) {
	return s.update(ctx, id, true, func(_ context.Context, _ *sql.Tx, cur *tenant.Tenant) (*tenant.Tenant, []tenant.Event, error) {
		return tenant.ApplyForget(cur, version, actor, message, s.now())
	})
}

// countByProvider counts live tenants by provider: a tenant of one
// placement under its provider column, a tenant of several once under
// each provider of its placements (tenants_placed finds them).
const countByProvider = `SELECT provider, count(*) FROM (
	SELECT provider FROM tenants WHERE deleted_at IS NULL AND placements = '[]'
	UNION ALL
	SELECT provider FROM (SELECT DISTINCT t.id, json_extract(p.value, '$.provider') AS provider
		FROM tenants AS t INDEXED BY tenants_placed, json_each(t.placements) AS p
		WHERE t.deleted_at IS NULL AND t.placements <> '[]')
) GROUP BY provider`

// CountByProvider counts the tenants that are not deleted, by compute
// provider; see tenant.ProviderCounter.
func (s *Store) CountByProvider(ctx context.Context) (map[string]int, error) {
	rows, err := s.query(ctx, countByProvider)
	if err != nil {
		return nil, fmt.Errorf("sqlite: count tenants by provider: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var provider string
		var n int
		if err := rows.Scan(&provider, &n); err != nil {
			return nil, fmt.Errorf("sqlite: count tenants by provider: %w", err)
		}
		out[provider] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: count tenants by provider: %w", err)
	}
	return out, nil
}

var (
	_ tenant.Forgetter       = (*Store)(nil)
	_ tenant.ProviderCounter = (*Store)(nil)
)
