package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Webhook subscriptions (events.Store); their deliveries are in
// deliveries.go.

const (
	subscriptionColumns = `id, name, url, types, labels, secrets, description, enabled, disabled_reason, cursor, version, created_at, updated_at, created_by`
	// selectSubscription reads what scanSubscription does: the columns
	// and the count of pending deliveries (deliveries_key holds only
	// those).
	selectSubscription = `SELECT ` + subscriptionColumns + `,
	(SELECT count(*) FROM deliveries d WHERE d.subscription_id = subscriptions.id AND d.state = 'pending') FROM subscriptions`
	// insertSubscription stores a subscription ($1 to $13: its columns
	// but cursor) with the outbox's head as its cursor, in one statement,
	// and returns the cursor.
	insertSubscription = `INSERT INTO subscriptions (` + subscriptionColumns + `)
SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, (` + outboxHead + `), $10, $11, $12, $13 RETURNING cursor`
	updateSubscription = `UPDATE subscriptions SET name = $3, url = $4, types = $5, labels = $6, secrets = $7, description = $8,
	enabled = $9, disabled_reason = $10, version = version + 1, updated_at = $11
WHERE id = $1 AND version = $2 RETURNING cursor, version`
)

// subscriptionJSON are a subscription's JSONB columns.
type subscriptionJSON struct{ types, labels, secrets []byte }

// encodeSubscription encodes sub's types, labels and secrets, nil or
// empty ones as [] or {}.
func encodeSubscription(sub *events.Subscription) (subscriptionJSON, error) {
	var (
		j   = subscriptionJSON{types: []byte("[]"), labels: []byte("{}"), secrets: []byte("[]")}
		err error
	)
	if len(sub.Types) > 0 {
		if j.types, err = json.Marshal(sub.Types); err != nil {
			return j, fmt.Errorf("postgres: subscription %s: encode types: %w", sub.Name, err)
		}
	}
	if j.labels, err = encodeMap(sub.Labels); err != nil {
		return j, fmt.Errorf("postgres: subscription %s: encode labels: %w", sub.Name, err)
	}
	if len(sub.Secrets) > 0 {
		if j.secrets, err = json.Marshal(sub.Secrets); err != nil {
			return j, fmt.Errorf("postgres: subscription %s: encode secrets: %w", sub.Name, err)
		}
	}
	return j, nil
}

// scanSubscription reads a row of subscriptionColumns. Empty types and
// labels are nil.
func scanSubscription(row pgx.Row) (*events.Subscription, error) {
	var (
		sub                    events.Subscription
		types, labels, secrets []byte
	)
	err := row.Scan(&sub.ID, &sub.Name, &sub.URL, &types, &labels, &secrets, &sub.Description, &sub.Enabled, &sub.DisabledReason,
		&sub.Cursor, &sub.Version, &sub.CreatedAt, &sub.UpdatedAt, &sub.CreatedBy, &sub.Pending)
	if err != nil {
		return nil, err
	}
	sub.CreatedAt, sub.UpdatedAt = sub.CreatedAt.UTC(), sub.UpdatedAt.UTC()
	if err := json.Unmarshal(types, &sub.Types); err != nil {
		return nil, fmt.Errorf("postgres: subscription %s: types: %w", sub.ID, err)
	}
	if err := json.Unmarshal(secrets, &sub.Secrets); err != nil {
		return nil, fmt.Errorf("postgres: subscription %s: secrets: %w", sub.ID, err)
	}
	if sub.Labels, err = decodeMap(labels); err != nil {
		return nil, fmt.Errorf("postgres: subscription %s: labels: %w", sub.ID, err)
	}
	if len(sub.Types) == 0 {
		sub.Types = nil
	}
	return &sub, nil
}

// subscriptionError words a write's unique violation: a name taken, or an
// id used, is events.ErrNameTaken (an events.ErrConflict).
func subscriptionError(sub *events.Subscription, what string, err error) error {
	switch code, constraint := pgCode(err); {
	case err == nil:
		return nil
	case code == codeUniqueViolation && constraint == "subscriptions_name_key":
		return fmt.Errorf("%w: a subscription is called %q already; choose another name", events.ErrNameTaken, sub.Name)
	case code == codeUniqueViolation && constraint == "subscriptions_pkey":
		return fmt.Errorf("%w: subscription id %s is already used", events.ErrConflict, sub.ID)
	}
	return fmt.Errorf("postgres: %s subscription %s: %w", what, sub.Name, unavailable(err))
}

// CreateSubscription implements events.Store. A name taken (or an id
// used) is events.ErrConflict.
func (s *Store) CreateSubscription(ctx context.Context, in *events.Subscription) (*events.Subscription, error) {
	sub := *in
	now := tenant.Timestamp(s.now())
	sub.Version, sub.CreatedAt, sub.UpdatedAt = 1, now, now
	j, err := encodeSubscription(&sub)
	if err != nil {
		return nil, err
	}
	err = s.pool.QueryRow(ctx, insertSubscription, sub.ID, sub.Name, sub.URL, j.types, j.labels, j.secrets, sub.Description,
		sub.Enabled, sub.DisabledReason, sub.Version, sub.CreatedAt, sub.UpdatedAt, sub.CreatedBy).Scan(&sub.Cursor)
	if err := subscriptionError(&sub, "create", err); err != nil {
		return nil, err
	}
	return &sub, nil
}

// Subscription implements events.Store: by id first, else by name.
func (s *Store) Subscription(ctx context.Context, idOrName string) (*events.Subscription, error) {
	sub, err := scanSubscription(s.pool.QueryRow(ctx, selectSubscription+` WHERE id = $1 OR name = $1 ORDER BY id = $1 DESC LIMIT 1`, idOrName))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: no subscription %q; list them with GET /v1/subscriptions", events.ErrNotFound, idOrName)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: read subscription %q: %w", idOrName, unavailable(err))
	}
	return sub, nil
}

// Subscriptions implements events.Store.
func (s *Store) Subscriptions(ctx context.Context) ([]*events.Subscription, error) {
	rows, err := s.pool.Query(ctx, selectSubscription+` ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list subscriptions: %w", unavailable(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*events.Subscription, error) { return scanSubscription(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list subscriptions: %w", unavailable(err))
	}
	return out, nil
}

// UpdateSubscription implements events.Store. A version that is not the
// stored one, or a name taken, is events.ErrConflict; no such subscription
// events.ErrNotFound.
func (s *Store) UpdateSubscription(ctx context.Context, in *events.Subscription) (*events.Subscription, error) {
	sub := *in
	sub.UpdatedAt = tenant.Timestamp(s.now())
	j, err := encodeSubscription(&sub)
	if err != nil {
		return nil, err
	}
	err = s.pool.QueryRow(ctx, updateSubscription, sub.ID, sub.Version, sub.Name, sub.URL, j.types, j.labels, j.secrets, sub.Description,
		sub.Enabled, sub.DisabledReason, sub.UpdatedAt).Scan(&sub.Cursor, &sub.Version)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, s.missingOrChanged(ctx, sub.ID, in.Version)
	}
	if err := subscriptionError(&sub, "update", err); err != nil {
		return nil, err
	}
	return &sub, nil
}

// missingOrChanged is the error of a write to subscription id at version
// that matched no row.
func (s *Store) missingOrChanged(ctx context.Context, id string, version int64) error {
	var cur int64
	err := s.pool.QueryRow(ctx, `SELECT version FROM subscriptions WHERE id = $1`, id).Scan(&cur)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: no subscription %q", events.ErrNotFound, id)
	}
	if err != nil {
		return fmt.Errorf("postgres: read subscription %s: %w", id, unavailable(err))
	}
	return fmt.Errorf("%w: subscription %s is at version %d, not %d: read it again", events.ErrConflict, id, cur, version)
}

// DeleteSubscription implements events.Store: its deliveries and their
// attempts go with it (ON DELETE CASCADE). No such subscription is
// events.ErrNotFound.
func (s *Store) DeleteSubscription(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM subscriptions WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("postgres: delete subscription %s: %w", id, unavailable(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: no subscription %q", events.ErrNotFound, id)
	}
	return nil
}
