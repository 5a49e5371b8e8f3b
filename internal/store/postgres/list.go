package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// List implements tenant.Store. Pages are keyset-paginated on id: a page
// reads at most one row more than it returns, to know whether another
// follows. It returns an error wrapping tenant.ErrInvalidPageToken for a
// token no tenant listing returned.
func (s *Store) List(ctx context.Context, opts tenant.ListOptions) (*tenant.Page, error) {
	after, err := tenant.DecodeTenantPageToken(opts.PageToken)
	if err != nil {
		return nil, fmt.Errorf("postgres: list tenants: %w", err)
	}
	if err := tenant.ValidateSelector(opts.Labels); err != nil {
		return nil, err
	}
	size := tenant.ClampPageSize(opts.PageSize)
	q, args, ok, err := listQuery(opts, after, size)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &tenant.Page{}, nil
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list tenants: %w", unavailable(err))
	}
	tenants, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*tenant.Tenant, error) {
		t, err := scanTenant(row)
		if err == nil {
			err = tenant.OpenListed(s.sealer, t)
		}
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list tenants: %w", unavailable(err))
	}
	page := &tenant.Page{Tenants: tenants}
	if len(tenants) > size {
		page.Tenants = tenants[:size]
		page.NextPageToken = tenant.EncodePageToken(tenants[size-1].ID)
	}
	return page, nil
}

// listQuery is List's query and its arguments, for a page of size rows
// after the id after. It is false when opts can match no tenant.
func listQuery(opts tenant.ListOptions, after string, size int) (q string, args []any, ok bool, err error) {
	var where []string
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if after != "" {
		where = append(where, "id > "+arg(after))
	}
	if len(opts.Statuses) > 0 {
		statuses := make([]string, len(opts.Statuses))
		for i, st := range opts.Statuses {
			statuses[i] = string(st)
		}
		where = append(where, "status = ANY("+arg(statuses)+")")
	}
	if opts.Plan != "" {
		where = append(where, "plan_name = "+arg(opts.Plan))
	}
	if len(opts.Labels) > 0 {
		sel, err := json.Marshal(opts.Labels)
		if err != nil {
			return "", nil, false, fmt.Errorf("postgres: list tenants: encode labels: %w", err)
		}
		where = append(where, "labels @> "+arg(sel))
	}
	if opts.NamePrefix != "" {
		if !utf8.ValidString(opts.NamePrefix) || strings.ContainsRune(opts.NamePrefix, 0) {
			// Not text PostgreSQL can hold, so no name starts with it.
			return "", nil, false, nil
		}
		// A range in byte order (COLLATE "C"), which the index
		// tenants_name_prefix_idx serves, also in a generic plan, as LIKE
		// with a parameter cannot be; and the prefix is text, not a pattern.
		where = append(where, `name COLLATE "C" >= `+arg(opts.NamePrefix))
		if end, bounded := prefixEnd(opts.NamePrefix); bounded {
			where = append(where, `name COLLATE "C" < `+arg(end))
		}
	}
	if !opts.IncludeDeleted && !slices.Contains(opts.Statuses, tenant.StatusDeleted) {
		where = append(where, "deleted_at IS NULL")
	}
	limit := arg(size + 1)
	if opts.Provider == "" {
		return selectTenant + whereClause(where) + " ORDER BY id LIMIT " + limit, args, true, nil
	}
	// Two queries of a page each, merged in id order: the tenants whose
	// first placement runs on the provider (the provider column, which
	// tenants_provider_idx serves in id order), and those of several
	// placements (tenants_placed_idx) with another placement on it, which
	// the first did not find.
	p := arg(opts.Provider)
	first := append(slices.Clip(where), "provider = "+p)
	other := append(slices.Clip(where), "placements <> '[]'", "provider <> "+p,
		"placements::jsonb @> jsonb_build_array(jsonb_build_object('provider', "+p+"::text))")
	q = "(" + selectTenant + whereClause(first) + " ORDER BY id LIMIT " + limit + ")\nUNION ALL\n(" +
		selectTenant + whereClause(other) + " ORDER BY id LIMIT " + limit + ")\nORDER BY id LIMIT " + limit
	return q, args, true, nil
}

// whereClause is " WHERE " and the conditions joined by AND, "" for none.
func whereClause(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// prefixEnd is the least valid UTF-8 string, in byte order, that follows
// every string starting with prefix (valid UTF-8): prefix with its last code
// point incremented, after dropping trailing U+10FFFF. It is false when
// prefix is all U+10FFFF, and nothing follows.
func prefixEnd(prefix string) (string, bool) {
	for prefix != "" {
		r, size := utf8.DecodeLastRuneInString(prefix)
		prefix = prefix[:len(prefix)-size]
		switch {
		case r == utf8.MaxRune:
			continue
		case r == 0xD7FF: // UTF-8 has no surrogates
			r = 0xE000
		default:
			r++
		}
		return prefix + string(r), true
	}
	return "", false
}

// listWork's predicate is tenant.Tenant.NeedsWork. No index serves it (an
// index on status would keep status transitions from being HOT updates; see
// migration 00005): a page walks tenants_live in id order from $1 until it
// has $2 ids, and a sweep walks it once.
const listWork = `SELECT id FROM tenants
WHERE deleted_at IS NULL
  AND (generation <> observed_generation OR status IN ('requested', 'provisioning', 'updating', 'deleting'))
  AND id > $1
ORDER BY id LIMIT $2`

// minID sorts before every tenant id.
const minID = "00000000-0000-0000-0000-000000000000"

// ListWork implements tenant.Store. opts.After must be "" or a tenant id
// (else the error wraps tenant.ErrInvalidPageToken).
func (s *Store) ListWork(ctx context.Context, opts tenant.WorkOptions) ([]string, error) {
	after := opts.After
	switch {
	case after == "":
		after = minID
	case !tenant.IsID(after):
		return nil, fmt.Errorf("postgres: list work: %w: after %q is not a tenant id", tenant.ErrInvalidPageToken, after)
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = tenant.DefaultWorkLimit
	}
	rows, err := s.pool.Query(ctx, listWork, after, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list work: %w", unavailable(err))
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: list work: %w", unavailable(err))
	}
	return ids, nil
}

// CountByStatus counts the tenants that are not deleted, by status; see
// tenant.StatusCounter.
func (s *Store) CountByStatus(ctx context.Context) (map[tenant.Status]int, error) {
	rows, err := s.pool.Query(ctx, `SELECT status, count(*) FROM tenants WHERE deleted_at IS NULL GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("postgres: count tenants: %w", unavailable(err))
	}
	out := map[tenant.Status]int{}
	var status string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&status, &n}, func() error {
		out[tenant.Status(status)] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: count tenants: %w", unavailable(err))
	}
	return out, nil
}

var _ tenant.StatusCounter = (*Store)(nil)
