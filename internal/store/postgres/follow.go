package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// A tenant's write that puts it on a plan (its create, or a change of its
// plan) checks, in its transaction, that the plan exists, is for the
// tenant's provider and has the version (fleet.CheckFollow), holding the
// plan's row FOR SHARE until it commits. The lock conflicts with
// DeletePlan's FOR UPDATE and with the UPDATE of a rollout's completion,
// each of which then looks for followers in a later statement: whichever
// commits first, the other sees it. A follower is thus never written for
// a plan that is gone, nor missed by a plan's deletion or a rollout's
// completion.
//
// Locks are taken in one order: a tenant's row, then its plan's.

// followedColumns are what followedCTE and lockFollowed read of a plan.
const followedColumns = `provider, EXISTS (SELECT 1 FROM plan_versions WHERE plan = $%[1]d AND version = $%[2]d) AS has_version`

// followedCTE is the CTE "followed": the plan named by parameter name,
// locked FOR SHARE, with its provider and whether it has the version of
// parameter version. It has no row when there is no such plan.
func followedCTE(name, version int) string {
	return `followed AS (SELECT ` + fmt.Sprintf(followedColumns, name, version) + `
	FROM plans WHERE name = $` + strconv.Itoa(name) + ` FOR SHARE)`
}

// lockFollowed locks plan $1 FOR SHARE and reads its provider and whether
// it has version $2; no row when there is no such plan.
var lockFollowed = `SELECT ` + fmt.Sprintf(followedColumns, 1, 2) + ` FROM plans WHERE name = $1 FOR SHARE`

// createOnPlan and createCompletingOnPlan create a tenant that follows a
// plan, in one statement (one round trip, one transaction) as Create and
// CreateIdempotent do one that does not: see createStatement.
var (
	createOnPlan           = createStatement(false)
	createCompletingOnPlan = createStatement(true)
)

// createStatement is the statement that creates a tenant following a
// plan: it locks the plan FOR SHARE (followedCTE) and, only if the plan
// is for the tenant's provider and has its version, inserts the tenant
// (tenantColumns) and its event (eventArgs but the tenant id) and
// announces it to watchers. Idempotent, it first keeps the response
// (completeIdempotent, $1 to $7), and inserts only if it did, as
// createCompleting does; the tenant's values then start at $8.
//
// It returns one row: whether the reservation was pending (true when not
// idempotent), the plan's provider (NULL: no such plan), whether it has
// the version, and the number of tenants created (0 or 1).
func createStatement(idempotent bool) string {
	tenantFrom := 1
	if idempotent {
		tenantFrom = 8
	}
	eventFrom := tenantFrom + len(tenantColumns)
	notifyArg := eventFrom + eventArgCount - 1
	arg := func(column string) string { return "$" + strconv.Itoa(tenantFrom+slices.Index(tenantColumns, column)) }
	name, version := tenantFrom+slices.Index(tenantColumns, "plan_name"), tenantFrom+slices.Index(tenantColumns, "plan_version")
	followable := `followed WHERE provider = ` + arg("provider") + ` AND has_version`
	with, source, pending := `WITH `+followedCTE(name, version), followable, `true`
	if idempotent {
		with += `,
pending AS (SELECT 1 FROM idempotency_keys WHERE actor = $1 AND key = $2 AND token = $3 AND status = 0),
done AS (` + completeIdempotent + ` AND EXISTS (SELECT 1 FROM ` + followable + `) RETURNING 1)`
		source, pending = `done`, `EXISTS (SELECT 1 FROM pending)`
	}
	return with + `,
created AS (INSERT INTO tenants (` + strings.Join(tenantColumns, ", ") + `)
	SELECT ` + placeholders(tenantFrom, len(tenantColumns)) + ` FROM ` + source + ` RETURNING id),
event AS (INSERT INTO events (` + eventColumns + `)
	SELECT created.id, ` + placeholders(eventFrom, eventArgCount-1) + ` FROM created),
notified AS (SELECT pg_notify('` + watchChannel + `', $` + strconv.Itoa(notifyArg) + `) FROM created)
SELECT ` + pending + `, (SELECT provider FROM followed), coalesce((SELECT has_version FROM followed), false), (SELECT count(*) FROM notified)`
}

// createdOnPlan reads the row of createStatement for t: nil when the
// tenant was created, else tenant.ErrReservationLost (idempotent: the
// reservation was not pending) or fleet.CheckFollow's refusal.
func createdOnPlan(row pgx.Row, t *tenant.Tenant, key string) error {
	var (
		pending, hasVersion bool
		provider            *string
		created             int64
	)
	if err := row.Scan(&pending, &provider, &hasVersion, &created); err != nil {
		return err
	}
	switch {
	case created == 1:
		return nil
	case !pending:
		return fmt.Errorf("idempotency key %q: %w", key, tenant.ErrReservationLost)
	}
	found := fleet.FoundPlan{Exists: provider != nil, HasVersion: hasVersion}
	if provider != nil {
		found.Provider = *provider
	}
	if err := fleet.CheckFollow(t.Plan, t.Provider, found); err != nil {
		return err
	}
	return errors.New("the tenant was not created, for no reason the statement gives")
}

// checkFollowed checks, in the transaction begun on conn, that next may
// follow the plans the write puts it, or the target of a move of its, on
// (tenant.NewFollows): it locks each plan FOR SHARE and applies
// fleet.CheckFollow. A write that leaves the plans as they were checks
// nothing. One round trip per plan, when it checks.
func checkFollowed(ctx context.Context, conn *pgxpool.Conn, cur, next *tenant.Tenant) error {
	for _, f := range tenant.NewFollows(cur, next) {
		var (
			found fleet.FoundPlan
			err   = conn.QueryRow(ctx, lockFollowed, f.Plan.Name, f.Plan.Version).Scan(&found.Provider, &found.HasVersion)
		)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			found.Exists = true
		}
		if err := fleet.CheckFollow(&f.Plan, f.Provider, found); err != nil {
			return err
		}
	}
	return nil
}

// selectNewcomers names (up to fleet.MaxNewcomersNamed, with their count)
// the tenants a completing rollout ($4, of plan $1 to version $2 or, a
// fleet move, 0, from version $3 or any when 0; fleet.Spec.Done) would take and that are not its members: the
// candidates of fleet.Select that the driver would add as newcomers.
var selectNewcomers = `SELECT name, count(*) OVER () FROM tenants t
WHERE plan_name = $1 AND deleted_at IS NULL AND deletion_requested_at IS NULL AND status <> 'deleted' AND NOT plan_pinned
	AND plan_version <> $2 AND ($3::bigint = 0 OR plan_version = $3)
	AND NOT EXISTS (SELECT 1 FROM rollout_members m WHERE m.rollout_id = $4 AND m.tenant_id = t.id)
ORDER BY id LIMIT ` + strconv.Itoa(fleet.MaxNewcomersNamed)
