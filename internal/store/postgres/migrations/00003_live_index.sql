-- +goose Up
-- Live tenants in id order: the default listing (deleted_at IS NULL ORDER BY
-- id) reads this instead of stepping over every deleted tenant.
CREATE INDEX tenants_live ON tenants (id) WHERE deleted_at IS NULL;

-- +goose Down
DROP INDEX tenants_live;
