-- +goose Up
-- The plan a tenant follows (tenant.PlanRef; name and version NULL when
-- none) and its maintenance window (tenant.Window; NULL when none). These
-- are desired state: observations write them unchanged, so the index below
-- keeps status transitions HOT (migration 00005).
ALTER TABLE tenants
    ADD COLUMN plan_name          text,
    ADD COLUMN plan_version       bigint CHECK (plan_version > 0),
    ADD COLUMN plan_pinned        boolean NOT NULL DEFAULT false,
    ADD COLUMN maintenance_window jsonb CHECK (jsonb_typeof(maintenance_window) = 'object'),
    ADD CONSTRAINT tenants_plan_check CHECK ((plan_name IS NULL) = (plan_version IS NULL));
-- List by plan (ListOptions.Plan): live tenants in id order; also what
-- DeletePlan asks: does a live tenant follow the plan?
CREATE INDEX tenants_plan_idx ON tenants (plan_name, id) WHERE deleted_at IS NULL;

-- Plans (fleet.Plan) and their published versions, which never change.
CREATE TABLE plans (
    name            text        PRIMARY KEY,
    provider        text        NOT NULL,
    description     text        NOT NULL DEFAULT '',
    latest_version  bigint      NOT NULL DEFAULT 0 CHECK (latest_version >= 0),
    current_version bigint      NOT NULL DEFAULT 0 CHECK (current_version >= 0),
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    created_by      text        NOT NULL DEFAULT ''
);

CREATE TABLE plan_versions (
    plan       text        NOT NULL REFERENCES plans (name) ON DELETE CASCADE,
    version    bigint      NOT NULL CHECK (version > 0),
    config     jsonb       NOT NULL CHECK (jsonb_typeof(config) = 'object'),
    message    text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    created_by text        NOT NULL DEFAULT '',
    PRIMARY KEY (plan, version)
);

-- Rollouts (fleet.Rollout): spec is fleet.Spec and waves
-- []fleet.AssignedWave. A plan's rollouts go with it (DeletePlan refuses
-- while one is active).
CREATE TABLE rollouts (
    id          uuid        PRIMARY KEY,
    plan        text        NOT NULL REFERENCES plans (name) ON DELETE CASCADE,
    spec        jsonb       NOT NULL CHECK (jsonb_typeof(spec) = 'object'),
    waves       jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(waves) = 'array'),
    state       text        NOT NULL CHECK (state IN ('running', 'paused', 'halted', 'aborting', 'aborted', 'completed')),
    wave        integer     NOT NULL DEFAULT 0,
    bake_from   timestamptz,
    rollback    boolean     NOT NULL DEFAULT false,
    message     text        NOT NULL DEFAULT '',
    version     bigint      NOT NULL CHECK (version > 0),
    created_by  text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    finished_at timestamptz
);

-- A plan has at most one active rollout (fleet.State.Active).
CREATE UNIQUE INDEX rollouts_active_plan_key ON rollouts (plan)
    WHERE state IN ('running', 'paused', 'halted', 'aborting');
-- ListRollouts, newest first, of every plan or of one.
CREATE INDEX rollouts_created_idx ON rollouts (created_at DESC, id DESC);
CREATE INDEX rollouts_plan_idx ON rollouts (plan, created_at DESC, id DESC);

CREATE TABLE rollout_members (
    rollout_id   uuid        NOT NULL REFERENCES rollouts (id) ON DELETE CASCADE,
    tenant_id    uuid        NOT NULL,
    tenant_name  text        NOT NULL,
    wave         integer     NOT NULL,
    state        text        NOT NULL CHECK (state IN ('pending', 'changing', 'done', 'failed', 'skipped', 'rolled_back')),
    from_version bigint      NOT NULL,
    generation   bigint      NOT NULL DEFAULT 0,
    changed_at   timestamptz,
    finished_at  timestamptz,
    message      text        NOT NULL DEFAULT '',
    PRIMARY KEY (rollout_id, tenant_id)
);

-- Members, in wave then tenant order.
CREATE INDEX rollout_members_wave_idx ON rollout_members (rollout_id, wave, tenant_id);

-- A rollout's own history; seq counts from 1 per rollout, numbered under
-- the rollout's row lock.
CREATE TABLE rollout_events (
    rollout_id  uuid        NOT NULL REFERENCES rollouts (id) ON DELETE CASCADE,
    seq         bigint      NOT NULL,
    time        timestamptz NOT NULL,
    type        text        NOT NULL,
    tenant_id   text        NOT NULL DEFAULT '',
    tenant_name text        NOT NULL DEFAULT '',
    wave        integer     NOT NULL DEFAULT 0,
    message     text        NOT NULL DEFAULT '',
    actor       text        NOT NULL DEFAULT '',
    PRIMARY KEY (rollout_id, seq)
);

-- +goose Down
DROP TABLE rollout_events;
DROP TABLE rollout_members;
DROP TABLE rollouts;
DROP TABLE plan_versions;
DROP TABLE plans;
DROP INDEX tenants_plan_idx;
ALTER TABLE tenants
    DROP COLUMN maintenance_window,
    DROP COLUMN plan_pinned,
    DROP COLUMN plan_version,
    DROP COLUMN plan_name;
