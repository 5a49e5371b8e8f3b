package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// List returns one page of tenants; see tenant.Store.
func (s *Store) List(ctx context.Context, opts tenant.ListOptions) (*tenant.Page, error) {
	after, err := tenant.DecodeTenantPageToken(opts.PageToken)
	if err != nil {
		return nil, err
	}
	size := tenant.ClampPageSize(opts.PageSize)
	var where []string
	var args []any
	if after != "" {
		where, args = append(where, "id > ?"), append(args, after)
	}
	if !opts.IncludeDeleted && !slices.Contains(opts.Statuses, tenant.StatusDeleted) {
		where = append(where, "deleted_at IS NULL")
	}
	if len(opts.Statuses) > 0 {
		where = append(where, "status IN (?"+strings.Repeat(", ?", len(opts.Statuses)-1)+")")
		for _, st := range opts.Statuses {
			args = append(args, string(st))
		}
	}
	if opts.Plan != "" {
		where, args = append(where, "plan_name = ?"), append(args, opts.Plan)
	}
	if opts.NamePrefix != "" {
		// A range on the name index, not LIKE: the prefix is text, never a
		// pattern. Names compare as bytes, and 0xFF follows every byte of
		// UTF-8 text.
		where, args = append(where, "name >= ? AND name < ?"), append(args, opts.NamePrefix, opts.NamePrefix+"\xff")
	}
	if err := tenant.ValidateSelector(opts.Labels); err != nil {
		return nil, err // also keeps keys safe inside a JSON path
	}
	for _, k := range slices.Sorted(maps.Keys(opts.Labels)) {
		where, args = append(where, "json_extract(labels, ?) = ?"), append(args, `$."`+k+`"`, opts.Labels[k])
	}
	var q string
	if opts.Provider == "" {
		q, args = `SELECT `+tenantColumns+` FROM tenants`+whereClause(where)+` ORDER BY id LIMIT ?`, append(args, size+1)
	} else {
		q, args = byProvider(where, args, opts.Provider, size+1)
	}

	var rows *sql.Rows
	if len(opts.Statuses) == 0 && len(opts.Labels) == 0 {
		rows, err = s.query(ctx, q, args...) // a few shapes: worth preparing once
	} else {
		rows, err = s.read.QueryContext(ctx, q, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: list tenants: %w", err)
	}
	defer rows.Close()
	page := &tenant.Page{Tenants: make([]*tenant.Tenant, 0, size)}
	for rows.Next() {
		t, err := scanTenant(rows)
		if err == nil {
			err = tenant.OpenListed(s.sealer, t)
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite: list tenants: %w", err)
		}
		page.Tenants = append(page.Tenants, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list tenants: %w", err)
	}
	if len(page.Tenants) > size {
		page.Tenants = page.Tenants[:size]
		page.NextPageToken = tenant.EncodePageToken(page.Tenants[size-1].ID)
	}
	return page, nil
}

// byProvider is List's query, with the other filters where (whose
// arguments are args), of a page of limit tenants any of whose placements
// run on provider, and its arguments. It is two queries of a page each,
// merged in id order: the tenants whose first placement runs on provider
// (the provider column, which tenants_provider serves in id order), and
// those of several placements (tenants_placed) with another placement on
// it, which the first did not find.
func byProvider(where []string, args []any, provider string, limit int) (string, []any) {
	first := append(slices.Clip(where), "provider = ?")
	other := append(slices.Clip(where), "placements <> '[]'", "provider <> ?",
		"EXISTS (SELECT 1 FROM json_each(placements) WHERE json_extract(value, '$.provider') = ?)")
	q := `SELECT * FROM (SELECT ` + tenantColumns + ` FROM tenants` + whereClause(first) + ` ORDER BY id LIMIT ?)
	UNION ALL
	SELECT * FROM (SELECT ` + tenantColumns + ` FROM tenants INDEXED BY tenants_placed` + whereClause(other) + ` ORDER BY id LIMIT ?)
	ORDER BY id LIMIT ?`
	out := append(slices.Clone(args), provider, limit)
	out = append(out, args...)
	return q, append(out, provider, provider, limit, limit)
}

// whereClause is " WHERE " and the conditions joined by AND, "" for none.
func whereClause(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return ` WHERE ` + strings.Join(conds, " AND ")
}

// ListWork returns the ids of tenants that need the controller; see
// tenant.Store.
func (s *Store) ListWork(ctx context.Context, opts tenant.WorkOptions) ([]string, error) {
	if opts.After != "" && !tenant.IsID(opts.After) {
		return nil, fmt.Errorf("sqlite: list work: %w: after %q is not a tenant id", tenant.ErrInvalidPageToken, opts.After)
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = tenant.DefaultWorkLimit
	}
	rows, err := s.query(ctx, `SELECT id FROM tenants
		WHERE deleted_at IS NULL
		  AND (generation <> observed_generation OR status IN ('requested', 'provisioning', 'updating', 'deleting'))
		  AND id > ?
		ORDER BY id LIMIT ?`, opts.After, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list work: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("sqlite: list work: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list work: %w", err)
	}
	return ids, nil
}

// CountByStatus counts the tenants that are not deleted, by status; see
// tenant.StatusCounter.
func (s *Store) CountByStatus(ctx context.Context) (map[tenant.Status]int, error) {
	rows, err := s.query(ctx, `SELECT status, count(*) FROM tenants WHERE deleted_at IS NULL GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: count tenants: %w", err)
	}
	defer rows.Close()
	out := map[tenant.Status]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("sqlite: count tenants: %w", err)
		}
		out[tenant.Status(st)] = n
	}
	return out, rows.Err()
}

var _ tenant.StatusCounter = (*Store)(nil)
