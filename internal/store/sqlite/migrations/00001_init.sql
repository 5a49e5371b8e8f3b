-- +goose Up
CREATE TABLE tenants (
    id                    TEXT    PRIMARY KEY,
    name                  TEXT    NOT NULL,
    provider              TEXT    NOT NULL,
    compute_config        TEXT    NOT NULL CHECK (json_valid(compute_config)),
    labels                TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(labels)),
    annotations           TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(annotations)),
    status                TEXT    NOT NULL CHECK (status IN ('requested', 'provisioning', 'ready', 'updating', 'deleting', 'deleted', 'failed')),
    status_message        TEXT    NOT NULL DEFAULT '',
    generation            INTEGER NOT NULL,
    observed_generation   INTEGER NOT NULL DEFAULT 0,
    version               INTEGER NOT NULL,
    resource_ids          TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(resource_ids)),
    endpoints             TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(endpoints)),
    status_changed_at     INTEGER NOT NULL, -- Unix microseconds, UTC, as every time here
    attempts              INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    retry_at              INTEGER,
    deletion_requested_at INTEGER,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL,
    deleted_at            INTEGER
) STRICT;

-- A name is unique among tenants that are not deleted.
CREATE UNIQUE INDEX tenants_live_name ON tenants (name) WHERE deleted_at IS NULL;
CREATE INDEX tenants_name ON tenants (name, deleted_at);
CREATE INDEX tenants_status ON tenants (status, id);
CREATE INDEX tenants_provider ON tenants (provider, id);
-- What the controller must look at (tenant.Tenant.NeedsWork).
CREATE INDEX tenants_work ON tenants (id)
    WHERE deleted_at IS NULL
      AND (generation <> observed_generation OR status IN ('requested', 'provisioning', 'updating', 'deleting'));

CREATE TABLE events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id   TEXT    NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    time        INTEGER NOT NULL,
    type        TEXT    NOT NULL,
    from_status TEXT    NOT NULL DEFAULT '',
    to_status   TEXT    NOT NULL DEFAULT '',
    generation  INTEGER NOT NULL,
    message     TEXT    NOT NULL DEFAULT '',
    actor       TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX events_tenant ON events (tenant_id, seq);

-- Leases elect one controller among the processes sharing the database.
CREATE TABLE leases (
    name       TEXT    PRIMARY KEY,
    holder     TEXT    NOT NULL,
    epoch      INTEGER NOT NULL CHECK (epoch > 0),
    expires_at INTEGER NOT NULL
) STRICT;

-- Responses to requests sent with an Idempotency-Key, kept for 24 hours.
CREATE TABLE idempotency_keys (
    actor        TEXT    NOT NULL,
    key          TEXT    NOT NULL,
    request_hash TEXT    NOT NULL,
    status       INTEGER NOT NULL,
    header       TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(header)),
    body         BLOB    NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (actor, key)
) STRICT;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE leases;
DROP TABLE events;
DROP TABLE tenants;
