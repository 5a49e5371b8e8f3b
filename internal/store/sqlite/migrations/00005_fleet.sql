-- +goose Up
-- The plan a tenant follows (tenant.PlanRef; all NULL but plan_pinned when
-- none) and its maintenance window (tenant.Window as JSON; NULL when none).
ALTER TABLE tenants ADD COLUMN plan_name TEXT;
ALTER TABLE tenants ADD COLUMN plan_version INTEGER;
ALTER TABLE tenants ADD COLUMN plan_pinned INTEGER NOT NULL DEFAULT 0 CHECK (plan_pinned IN (0, 1));
ALTER TABLE tenants ADD COLUMN maintenance_window TEXT CHECK (maintenance_window IS NULL OR json_valid(maintenance_window));
-- List by plan (ListOptions.Plan), live tenants in id order; also what
-- DeletePlan asks: does a live tenant follow the plan?
CREATE INDEX tenants_plan ON tenants (plan_name, id) WHERE deleted_at IS NULL;

-- Plans (fleet.Plan) and their published versions, which never change.
CREATE TABLE plans (
    name            TEXT    PRIMARY KEY,
    provider        TEXT    NOT NULL,
    description     TEXT    NOT NULL DEFAULT '',
    latest_version  INTEGER NOT NULL DEFAULT 0 CHECK (latest_version >= 0),
    current_version INTEGER NOT NULL DEFAULT 0 CHECK (current_version >= 0),
    created_at      INTEGER NOT NULL, -- Unix microseconds, UTC, as every time here
    updated_at      INTEGER NOT NULL,
    created_by      TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE TABLE plan_versions (
    plan       TEXT    NOT NULL REFERENCES plans (name) ON DELETE CASCADE,
    version    INTEGER NOT NULL CHECK (version > 0),
    config     TEXT    NOT NULL CHECK (json_valid(config)),
    message    TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    created_by TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (plan, version)
) STRICT;

-- Rollouts (fleet.Rollout): spec is fleet.Spec and waves []fleet.AssignedWave,
-- as JSON. A plan's rollouts go with it (DeletePlan refuses while one is
-- active).
CREATE TABLE rollouts (
    id          TEXT    PRIMARY KEY,
    plan        TEXT    NOT NULL REFERENCES plans (name) ON DELETE CASCADE,
    spec        TEXT    NOT NULL CHECK (json_valid(spec)),
    waves       TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(waves)),
    state       TEXT    NOT NULL CHECK (state IN ('running', 'paused', 'halted', 'aborting', 'aborted', 'completed')),
    wave        INTEGER NOT NULL DEFAULT 0,
    bake_from   INTEGER,
    rollback    INTEGER NOT NULL DEFAULT 0 CHECK (rollback IN (0, 1)),
    message     TEXT    NOT NULL DEFAULT '',
    version     INTEGER NOT NULL CHECK (version > 0),
    created_by  TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    finished_at INTEGER
) STRICT;

-- A plan has at most one active rollout (fleet.State.Active).
CREATE UNIQUE INDEX rollouts_active_plan ON rollouts (plan)
    WHERE state IN ('running', 'paused', 'halted', 'aborting');
-- ListRollouts, newest first, of every plan or of one.
CREATE INDEX rollouts_created ON rollouts (created_at, id);
CREATE INDEX rollouts_plan ON rollouts (plan, created_at, id);

CREATE TABLE rollout_members (
    rollout_id   TEXT    NOT NULL REFERENCES rollouts (id) ON DELETE CASCADE,
    tenant_id    TEXT    NOT NULL,
    tenant_name  TEXT    NOT NULL,
    wave         INTEGER NOT NULL,
    state        TEXT    NOT NULL CHECK (state IN ('pending', 'changing', 'done', 'failed', 'skipped', 'rolled_back')),
    from_version INTEGER NOT NULL,
    generation   INTEGER NOT NULL DEFAULT 0,
    changed_at   INTEGER,
    finished_at  INTEGER,
    message      TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (rollout_id, tenant_id)
) STRICT;

-- Members, in wave then tenant order.
CREATE INDEX rollout_members_wave ON rollout_members (rollout_id, wave, tenant_id);

-- A rollout's own history; seq counts from 1 per rollout.
CREATE TABLE rollout_events (
    rollout_id  TEXT    NOT NULL REFERENCES rollouts (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    time        INTEGER NOT NULL,
    type        TEXT    NOT NULL,
    tenant_id   TEXT    NOT NULL DEFAULT '',
    tenant_name TEXT    NOT NULL DEFAULT '',
    wave        INTEGER NOT NULL DEFAULT 0,
    message     TEXT    NOT NULL DEFAULT '',
    actor       TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (rollout_id, seq)
) STRICT;

-- +goose Down
DROP TABLE rollout_events;
DROP TABLE rollout_members;
DROP TABLE rollouts;
DROP TABLE plan_versions;
DROP TABLE plans;
DROP INDEX tenants_plan;
ALTER TABLE tenants DROP COLUMN maintenance_window;
ALTER TABLE tenants DROP COLUMN plan_pinned;
ALTER TABLE tenants DROP COLUMN plan_version;
ALTER TABLE tenants DROP COLUMN plan_name;
