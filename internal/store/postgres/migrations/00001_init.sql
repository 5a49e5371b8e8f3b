-- +goose Up
-- Tenants: desired state (written by the API), observed state (written by the
-- controller), and the lifecycle of the record. A deleted tenant keeps its row;
-- only tenants that are not deleted hold their name.
CREATE TABLE tenants (
    id                    uuid        PRIMARY KEY,
    name                  text        NOT NULL,
    provider              text        NOT NULL,
    compute_config        jsonb       NOT NULL CHECK (jsonb_typeof(compute_config) = 'object'),
    labels                jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(labels) = 'object'),
    annotations           jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(annotations) = 'object'),
    status                text        NOT NULL CHECK (status IN ('requested', 'provisioning', 'ready', 'updating', 'deleting', 'deleted', 'failed')),
    status_message        text        NOT NULL DEFAULT '',
    status_changed_at     timestamptz NOT NULL,
    generation            bigint      NOT NULL CHECK (generation > 0),
    observed_generation   bigint      NOT NULL DEFAULT 0 CHECK (observed_generation >= 0),
    version               bigint      NOT NULL CHECK (version > 0),
    resource_ids          jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(resource_ids) = 'object'),
    endpoints             jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(endpoints) = 'array'),
    -- Failed attempts at the current generation, and when the controller may
    -- try again: kept here so that backoff survives a controller restart.
    attempts              integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    retry_at              timestamptz,
    deletion_requested_at timestamptz,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    deleted_at            timestamptz,
    -- Status deleted and deleted_at go together: the name index and the
    -- listings rely on deleted_at alone.
    CONSTRAINT tenants_deleted_at_check CHECK ((status = 'deleted') = (deleted_at IS NOT NULL))
);

-- A name belongs to at most one tenant that is not deleted.
CREATE UNIQUE INDEX tenants_live_name_key ON tenants (name) WHERE deleted_at IS NULL;
-- Get by name with deleted tenants: the most recently deleted first.
CREATE INDEX tenants_name_idx ON tenants (name, deleted_at DESC, id DESC);
-- List by name prefix: a range in byte order (name COLLATE "C" >= prefix
-- AND < its successor), whatever the database's collation.
CREATE INDEX tenants_name_prefix_idx ON tenants (name COLLATE "C");
-- List filters, each in id (page) order.
CREATE INDEX tenants_status_idx ON tenants (status, id);
CREATE INDEX tenants_provider_idx ON tenants (provider, id);
CREATE INDEX tenants_labels_idx ON tenants USING gin (labels jsonb_path_ops);
-- ListWork: the tenants the controller has to look at, usually few. The
-- predicate must stay identical to the one in ListWork's query.
CREATE INDEX tenants_work_idx ON tenants (id)
    WHERE deleted_at IS NULL
      AND (generation <> observed_generation OR status IN ('requested', 'provisioning', 'updating', 'deleting'));

-- Events: every status transition and API change, per tenant in seq order.
CREATE TABLE events (
    seq         bigserial   PRIMARY KEY,
    tenant_id   uuid        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    time        timestamptz NOT NULL,
    -- type, from_status and to_status are not checked here: AppendEvent takes
    -- what callers give, as every store does.
    type        text        NOT NULL,
    from_status text        NOT NULL DEFAULT '',
    to_status   text        NOT NULL DEFAULT '',
    generation  bigint      NOT NULL,
    message     text        NOT NULL DEFAULT '',
    actor       text        NOT NULL DEFAULT ''
);

CREATE INDEX events_tenant_seq_idx ON events (tenant_id, seq);

-- Leases: named, expiring leases that elect one controller among replicas.
-- epoch grows every time a lease changes hands and fences the writes of a
-- former holder. A row is never deleted, so that epochs never repeat.
CREATE TABLE leases (
    name       text        PRIMARY KEY,
    holder     text        NOT NULL,
    epoch      bigint      NOT NULL CHECK (epoch > 0),
    expires_at timestamptz NOT NULL
);

-- Idempotency keys: the response to a request sent with an Idempotency-Key,
-- per caller, so that a retry gets the same answer from any replica. A row
-- answers for tenant.IdempotencyTTL after created_at; SaveIdempotent replaces
-- an expired one and deletes a few others (see idempotency.go).
CREATE TABLE idempotency_keys (
    actor        text        NOT NULL,
    key          text        NOT NULL,
    request_hash text        NOT NULL,
    status       integer     NOT NULL,
    header       jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(header) = 'object'),
    body         bytea       NOT NULL,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (actor, key)
);

-- Expiry: the rows older than the TTL, oldest first.
CREATE INDEX idempotency_keys_created_at_idx ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE leases;
DROP TABLE events;
DROP TABLE tenants;
