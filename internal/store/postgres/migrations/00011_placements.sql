-- +goose Up
-- A tenant's placements (tenant.PlacementsText): '[]' for a tenant of the
-- one placement every tenant had before placements, whose other columns
-- say everything (every row stored before this migration); else a JSON
-- array of every placement, the first without its compute_config, which
-- is the compute_config column. text, not jsonb: the configs of the
-- others are sealed as that column is, and their text is kept byte for
-- byte. Queries that look inside cast it (placements::jsonb).
ALTER TABLE tenants ADD COLUMN placements text NOT NULL DEFAULT '[]';
-- The tenants of several placements, in id order: the listing by provider
-- looks among them for those with a placement on the provider that is not
-- their first (whose provider is the provider column, tenants_provider_idx).
-- Its predicate reads placements, so an update that changes placements is
-- not HOT (migration 00005): the observations of tenants of several
-- placements, which change their placements' state. Those of a tenant of
-- one placement keep placements '[]', and stay HOT.
CREATE INDEX tenants_placed_idx ON tenants (id) WHERE placements <> '[]';

-- The placement an event is about, for a tenant of several placements;
-- '' for the tenant as a whole (every event stored before).
ALTER TABLE events ADD COLUMN placement text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE events DROP COLUMN placement;
DROP INDEX tenants_placed_idx;
ALTER TABLE tenants DROP COLUMN placements;
