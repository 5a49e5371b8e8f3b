-- +goose Up
-- What an "updated" event changed (tenant.Event.Changed: the names of the
-- fields of the desired state), for the event published; [] for the others.
ALTER TABLE events ADD COLUMN changed jsonb NOT NULL DEFAULT '[]';

-- The outbox (events.Record): one row per event landlord publishes, written
-- by the triggers below in the transaction of the change it reports, so
-- that no change commits without its event and no event without its
-- change.
--
-- PostgreSQL commits transactions out of the order in which they drew
-- numbers from a sequence, so a number drawn at insert cannot order the
-- feed: a reader that has read up to 10 could later find 9 committed. A
-- row is therefore written with seq (its order of writing) and no
-- position; SequenceOutbox (outbox.go) gives positions to committed rows,
-- in seq order, one run at a time, and readers read positioned rows only.
--
-- data is the history entry (tenant.Event's JSON but time, which is the
-- time column) of a tenant's event, or the data of a rollout's or a
-- plan's; tenant is the tenant's row when the event was written, as a JSON
-- array of the columns scanTenant reads, in tenantColumns' order (row.go),
-- secrets as stored. An id is 'evt_', the row's seq (16 hex digits), by
-- which it is found, and random bits (outbox_id): no index but the primary
-- key's for ids, which every event would write, and ids that never repeat
-- even where seqs do (a database restored from a backup).
CREATE TABLE outbox (
    seq      bigserial   PRIMARY KEY,
    position bigint      UNIQUE,
    id       text        NOT NULL,
    type     text        NOT NULL,
    subject  text        NOT NULL,
    key      text        NOT NULL,
    time     timestamptz NOT NULL,
    data     jsonb       NOT NULL,
    tenant   jsonb       CHECK (tenant IS NULL OR jsonb_typeof(tenant) = 'array')
);
-- SequenceOutbox: the rows not yet positioned, in seq order; few, as it
-- runs often.
CREATE INDEX outbox_unpositioned ON outbox (seq) WHERE position IS NULL;
-- PruneOutbox reads the oldest events in position order (outbox_position_key),
-- which is time order within a clock's steps: no index on time, which every
-- event would write.

-- outbox_id is the id of the event of outbox row seq: 'evt_', seq in 16 hex
-- digits, and 62 random bits (the second half of a version 4 UUID).
-- +goose StatementBegin
CREATE FUNCTION outbox_id(seq bigint) RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT 'evt_' || lpad(to_hex(seq), 16, '0') || substr(replace(gen_random_uuid()::text, '-', ''), 17, 16)
$$;
-- +goose StatementEnd

-- A tenant's events that are published (docs/events.md): its creation,
-- changes, deletion asked for, drift, being forgotten, a move's switch, and
-- the tenant's own status (not a placement's) becoming ready, failed or
-- deleted. The trigger's WHEN says which; the function writes the row.
--
-- The tenant's row is read as the event's transaction sees it when the
-- trigger fires, at the end of the statement that inserted the event: every
-- write inserts its events after the tenant's row, and a statement that
-- inserts both (a create's CTE) has inserted the row by then. A tenant the
-- trigger cannot find is an error, never an event lost: events references
-- tenants, so it cannot happen.
-- +goose StatementBegin
CREATE FUNCTION outbox_tenant_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    next bigint := nextval('outbox_seq_seq');
BEGIN
    INSERT INTO outbox (seq, id, type, subject, key, time, data, tenant)
    SELECT next, outbox_id(next),
        CASE NEW.type
            WHEN 'created' THEN 'landlord.tenant.created'
            WHEN 'updated' THEN 'landlord.tenant.changed'
            WHEN 'delete_requested' THEN 'landlord.tenant.deletion_requested'
            WHEN 'drift_detected' THEN 'landlord.tenant.drift_detected'
            WHEN 'forgotten' THEN 'landlord.tenant.forgotten'
            WHEN 'move' THEN 'landlord.placement.moved'
            ELSE 'landlord.tenant.' || NEW.to_status
        END,
        NEW.tenant_id::text, NEW.tenant_id::text, NEW.time,
        jsonb_build_object('seq', NEW.seq, 'tenant_id', NEW.tenant_id, 'placement', NEW.placement, 'type', NEW.type,
            'from', NEW.from_status, 'to', NEW.to_status, 'generation', NEW.generation, 'message', NEW.message, 'actor', NEW.actor,
            'changed', NEW.changed),
        jsonb_build_array(t.id, t.name, t.provider, t.compute_config, t.labels, t.annotations,
            t.plan_name, t.plan_version, t.plan_pinned, t.maintenance_window,
            t.status, t.status_message, t.status_changed_at, t.generation, t.observed_generation, t.version,
            t.resource_ids, t.endpoints, t.attempts, t.retry_at,
            t.deletion_requested_at, t.created_at, t.updated_at, t.deleted_at, t.drift, t.placements)
    FROM tenants t WHERE t.id = NEW.tenant_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'outbox: event % of tenant %: no such tenant', NEW.seq, NEW.tenant_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER outbox_tenant_events AFTER INSERT ON events FOR EACH ROW
WHEN (NEW.type IN ('created', 'updated', 'delete_requested', 'drift_detected', 'forgotten')
   OR (NEW.type = 'status' AND NEW.placement = '' AND NEW.to_status IN ('ready', 'failed', 'deleted'))
   OR (NEW.type = 'move' AND NEW.message LIKE 'placement % switched from %'))
EXECUTE FUNCTION outbox_tenant_event();

-- A rollout's events that are published: started, a wave's tenants all
-- changed (its bake begins), halted, completed, aborted; with the rollout
-- as its row is when the event is written.
-- +goose StatementBegin
CREATE FUNCTION outbox_rollout_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    next bigint := nextval('outbox_seq_seq');
BEGIN
    INSERT INTO outbox (seq, id, type, subject, key, time, data)
    SELECT next, outbox_id(next),
        CASE NEW.type WHEN 'wave_baking' THEN 'landlord.rollout.wave_completed' ELSE 'landlord.rollout.' || NEW.type END,
        NEW.rollout_id::text, 'rollout:' || NEW.rollout_id::text, NEW.time,
        jsonb_build_object(
            'rollout', jsonb_build_object('id', r.id, 'plan', r.plan, 'state', r.state, 'wave', r.wave,
                'rollback', r.rollback, 'message', r.message, 'spec', r.spec, 'created_by', r.created_by),
            'event', jsonb_build_object('seq', NEW.seq, 'type', NEW.type, 'wave', NEW.wave, 'message', NEW.message, 'actor', NEW.actor))
    FROM rollouts r WHERE r.id = NEW.rollout_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'outbox: event % of rollout %: no such rollout', NEW.seq, NEW.rollout_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER outbox_rollout_events AFTER INSERT ON rollout_events FOR EACH ROW
WHEN (NEW.type IN ('started', 'wave_baking', 'halted', 'completed', 'aborted'))
EXECUTE FUNCTION outbox_rollout_event();

-- A plan's version published.
-- +goose StatementBegin
CREATE FUNCTION outbox_plan_version() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    next bigint := nextval('outbox_seq_seq');
BEGIN
    INSERT INTO outbox (seq, id, type, subject, key, time, data)
    VALUES (next, outbox_id(next), 'landlord.plan.version_published', NEW.plan, 'plan:' || NEW.plan, NEW.created_at,
        jsonb_build_object('plan', NEW.plan, 'version', NEW.version, 'message', NEW.message, 'actor', NEW.created_by, 'config', NEW.config));
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER outbox_plan_versions AFTER INSERT ON plan_versions FOR EACH ROW
EXECUTE FUNCTION outbox_plan_version();

-- Webhook subscriptions (events.Subscription). secrets is a JSON array of
-- events.Secret, their values sealed when a key seals secrets; cursor the
-- outbox position up to which deliveries were made.
CREATE TABLE subscriptions (
    id              text        PRIMARY KEY,
    name            text        NOT NULL UNIQUE,
    url             text        NOT NULL,
    types           jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(types) = 'array'),
    labels          jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(labels) = 'object'),
    secrets         jsonb       NOT NULL CHECK (jsonb_typeof(secrets) = 'array'),
    description     text        NOT NULL DEFAULT '',
    enabled         boolean     NOT NULL,
    disabled_reason text        NOT NULL DEFAULT '',
    cursor          bigint      NOT NULL,
    version         bigint      NOT NULL CHECK (version > 0),
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    created_by      text        NOT NULL DEFAULT ''
);

-- An event to send to a subscription (events.Delivery), and its attempts.
CREATE TABLE deliveries (
    subscription_id text        NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    position        bigint      NOT NULL REFERENCES outbox (position) ON DELETE CASCADE,
    key             text        NOT NULL,
    state           text        NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0,
    tries           integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    last_status     integer     NOT NULL DEFAULT 0,
    last_error      text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (subscription_id, position)
);
-- DueDeliveries: the pending, by when they are due; the first pending of a
-- subscription's key.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX deliveries_key ON deliveries (subscription_id, key, position) WHERE state = 'pending';
-- PruneOutbox: is an event still to be delivered? (Also what deleting an
-- event's row looks up to cascade.)
CREATE INDEX deliveries_position ON deliveries (position);

CREATE TABLE delivery_attempts (
    subscription_id text        NOT NULL,
    position        bigint      NOT NULL,
    number          integer     NOT NULL,
    time            timestamptz NOT NULL,
    status          integer     NOT NULL,
    latency_us      bigint      NOT NULL,
    error           text        NOT NULL DEFAULT '',
    response        text        NOT NULL DEFAULT '',
    PRIMARY KEY (subscription_id, position, number),
    FOREIGN KEY (subscription_id, position) REFERENCES deliveries (subscription_id, position) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE delivery_attempts;
DROP TABLE deliveries;
DROP TABLE subscriptions;
DROP TRIGGER outbox_plan_versions ON plan_versions;
DROP TRIGGER outbox_rollout_events ON rollout_events;
DROP TRIGGER outbox_tenant_events ON events;
DROP FUNCTION outbox_plan_version();
DROP FUNCTION outbox_rollout_event();
DROP FUNCTION outbox_tenant_event();
DROP FUNCTION outbox_id(bigint);
DROP TABLE outbox;
ALTER TABLE events DROP COLUMN changed;
