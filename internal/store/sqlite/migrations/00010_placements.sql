-- +goose Up
-- A tenant's placements (tenant.PlacementsText): '[]' for a tenant of the
-- one placement every tenant had before placements, whose other columns
-- say everything (every row stored before this migration); else a JSON
-- array of every placement, the first without its compute_config, which
-- is the compute_config column. The configs of the others are sealed as
-- that column is, so the text is kept as written.
ALTER TABLE tenants ADD COLUMN placements TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(placements));
-- The tenants of several placements, in id order: the listing by provider
-- looks among them for those with a placement on the provider that is not
-- their first (whose provider is the provider column, tenants_provider).
CREATE INDEX tenants_placed ON tenants (id) WHERE placements <> '[]';

-- The placement an event is about, for a tenant of several placements;
-- '' for the tenant as a whole (every event stored before).
ALTER TABLE events ADD COLUMN placement TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE events DROP COLUMN placement;
DROP INDEX tenants_placed;
ALTER TABLE tenants DROP COLUMN placements;
