-- +goose Up
-- What an "updated" event changed (tenant.Event.Changed: the names of the
-- fields of the desired state), for the event published; [] for the others.
ALTER TABLE events ADD COLUMN changed TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(changed));

-- The outbox (events.Record): one row per event landlord publishes, written
-- by the triggers below in the transaction of the change it reports, so
-- that no change commits without its event and no event without its
-- change. position is the feed's order: SQLite commits one transaction at
-- a time, so positions grow in commit order. data is the history entry
-- (tenant.Event's JSON but time, which is the time column) of a tenant's
-- event, or the data of a rollout's or a plan's; tenant is the tenant's row
-- when the event was written, as a JSON array of the columns scanTenant
-- reads (tenantColumns), secrets as stored.
--
-- Each event writes one row and no index but the table's own: an id is
-- 'evt_', the event's position (16 hex digits), by which it is found, and
-- 64 random bits, so that ids never repeat even where positions do (a
-- database restored from a backup gives again the positions given after
-- it). A position is the last one plus 1: PruneOutbox keeps the newest
-- event, so that none is given twice in one database. PruneOutbox reads
-- the oldest events in position order, which is time order within a
-- clock's steps: no index on time.
CREATE TABLE outbox (
    position INTEGER PRIMARY KEY,
    id       TEXT    NOT NULL,
    type     TEXT    NOT NULL,
    subject  TEXT    NOT NULL,
    key      TEXT    NOT NULL,
    time     INTEGER NOT NULL, -- Unix microseconds, UTC, as every time here
    data     TEXT    NOT NULL, -- JSON: the triggers write it with json_object
    tenant   TEXT              -- JSON: json_array
) STRICT;

-- A tenant's events that are published (docs/events.md): its creation,
-- changes, deletion asked for, drift, being forgotten, a move's switch, and
-- the tenant's own status (not a placement's) becoming ready, failed or
-- deleted.
-- +goose StatementBegin
CREATE TRIGGER outbox_tenant_events AFTER INSERT ON events
WHEN NEW.type IN ('created', 'updated', 'delete_requested', 'drift_detected', 'forgotten')
  OR (NEW.type = 'status' AND NEW.placement = '' AND NEW.to_status IN ('ready', 'failed', 'deleted'))
  OR (NEW.type = 'move' AND NEW.message LIKE 'placement % switched from %')
BEGIN
  INSERT INTO outbox (position, id, type, subject, key, time, data, tenant)
  SELECT p.next, 'evt_' || printf('%016x', p.next) || lower(hex(randomblob(8))),
    CASE NEW.type
      WHEN 'created' THEN 'landlord.tenant.created'
      WHEN 'updated' THEN 'landlord.tenant.changed'
      WHEN 'delete_requested' THEN 'landlord.tenant.deletion_requested'
      WHEN 'drift_detected' THEN 'landlord.tenant.drift_detected'
      WHEN 'forgotten' THEN 'landlord.tenant.forgotten'
      WHEN 'move' THEN 'landlord.placement.moved'
      ELSE 'landlord.tenant.' || NEW.to_status
    END,
    NEW.tenant_id, NEW.tenant_id, NEW.time,
    json_object('seq', NEW.seq, 'tenant_id', NEW.tenant_id, 'placement', NEW.placement, 'type', NEW.type,
      'from', NEW.from_status, 'to', NEW.to_status, 'generation', NEW.generation, 'message', NEW.message, 'actor', NEW.actor,
      'changed', json(NEW.changed)),
    json_array(t.id, t.name, t.provider, t.compute_config, t.labels, t.annotations,
      t.plan_name, t.plan_version, t.plan_pinned, t.maintenance_window, t.status, t.status_message,
      t.generation, t.observed_generation, t.version, t.resource_ids, t.endpoints,
      t.status_changed_at, t.attempts, t.retry_at,
      t.deletion_requested_at, t.created_at, t.updated_at, t.deleted_at, t.drift, t.placements)
  FROM (SELECT coalesce(max(position), 0) + 1 AS next FROM outbox) p, tenants t WHERE t.id = NEW.tenant_id;
END;
-- +goose StatementEnd

-- A rollout's events that are published: started, a wave's tenants all
-- changed (its bake begins), halted, completed, aborted.
-- +goose StatementBegin
CREATE TRIGGER outbox_rollout_events AFTER INSERT ON rollout_events
WHEN NEW.type IN ('started', 'wave_baking', 'halted', 'completed', 'aborted')
BEGIN
  INSERT INTO outbox (position, id, type, subject, key, time, data)
  SELECT p.next, 'evt_' || printf('%016x', p.next) || lower(hex(randomblob(8))),
    CASE NEW.type WHEN 'wave_baking' THEN 'landlord.rollout.wave_completed' ELSE 'landlord.rollout.' || NEW.type END,
    NEW.rollout_id, 'rollout:' || NEW.rollout_id, NEW.time,
    json_object('rollout', json_object('id', r.id, 'plan', r.plan, 'state', r.state, 'wave', r.wave,
        'rollback', json(CASE r.rollback WHEN 1 THEN 'true' ELSE 'false' END), 'message', r.message,
        'spec', json(r.spec), 'created_by', r.created_by),
      'event', json_object('seq', NEW.seq, 'type', NEW.type, 'wave', NEW.wave, 'message', NEW.message, 'actor', NEW.actor))
  FROM (SELECT coalesce(max(position), 0) + 1 AS next FROM outbox) p, rollouts r WHERE r.id = NEW.rollout_id;
END;
-- +goose StatementEnd

-- A plan's version published.
-- +goose StatementBegin
CREATE TRIGGER outbox_plan_versions AFTER INSERT ON plan_versions
BEGIN
  INSERT INTO outbox (position, id, type, subject, key, time, data)
  SELECT p.next, 'evt_' || printf('%016x', p.next) || lower(hex(randomblob(8))), 'landlord.plan.version_published', NEW.plan, 'plan:' || NEW.plan, NEW.created_at,
    json_object('plan', NEW.plan, 'version', NEW.version, 'message', NEW.message, 'actor', NEW.created_by, 'config', json(NEW.config))
  FROM (SELECT coalesce(max(position), 0) + 1 AS next FROM outbox) p;
END;
-- +goose StatementEnd

-- Webhook subscriptions (events.Subscription). secrets is a JSON array of
-- events.Secret, their values sealed when a key seals secrets; cursor the
-- outbox position up to which deliveries were made.
CREATE TABLE subscriptions (
    id              TEXT    PRIMARY KEY,
    name            TEXT    NOT NULL UNIQUE,
    url             TEXT    NOT NULL,
    types           TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(types)),
    labels          TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(labels)),
    secrets         TEXT    NOT NULL CHECK (json_valid(secrets)),
    description     TEXT    NOT NULL DEFAULT '',
    enabled         INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    disabled_reason TEXT    NOT NULL DEFAULT '',
    cursor          INTEGER NOT NULL,
    version         INTEGER NOT NULL CHECK (version > 0),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    created_by      TEXT    NOT NULL DEFAULT ''
) STRICT;

-- An event to send to a subscription (events.Delivery), and its attempts.
CREATE TABLE deliveries (
    subscription_id TEXT    NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    position        INTEGER NOT NULL REFERENCES outbox (position) ON DELETE CASCADE,
    key             TEXT    NOT NULL,
    state           TEXT    NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    tries           INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    last_status     INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT    NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    PRIMARY KEY (subscription_id, position)
) STRICT;
-- DueDeliveries: the pending, by when they are due; the first pending of a
-- subscription's key.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX deliveries_key ON deliveries (subscription_id, key, position) WHERE state = 'pending';
-- PruneOutbox: is an event still to be delivered?
CREATE INDEX deliveries_position ON deliveries (position);

CREATE TABLE delivery_attempts (
    subscription_id TEXT    NOT NULL,
    position        INTEGER NOT NULL,
    number          INTEGER NOT NULL,
    time            INTEGER NOT NULL,
    status          INTEGER NOT NULL,
    latency_us      INTEGER NOT NULL,
    error           TEXT    NOT NULL DEFAULT '',
    response        TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (subscription_id, position, number),
    FOREIGN KEY (subscription_id, position) REFERENCES deliveries (subscription_id, position) ON DELETE CASCADE
) STRICT;

-- +goose Down
DROP TABLE delivery_attempts;
DROP TABLE deliveries;
DROP TABLE subscriptions;
DROP TRIGGER outbox_plan_versions;
DROP TRIGGER outbox_rollout_events;
DROP TRIGGER outbox_tenant_events;
DROP TABLE outbox;
ALTER TABLE events DROP COLUMN changed;
