-- +goose Up
-- The last drift the controller found in a tenant's workload
-- (tenant.DriftReport; NULL when none ever was). Observed state, read by
-- no index, so an observation that writes it stays HOT (migration 00005).
ALTER TABLE tenants ADD COLUMN drift jsonb CHECK (jsonb_typeof(drift) = 'object');

-- +goose Down
ALTER TABLE tenants DROP COLUMN drift;
