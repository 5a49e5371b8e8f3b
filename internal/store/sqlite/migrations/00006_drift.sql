-- +goose Up
-- The last drift the controller found in a tenant's workload
-- (tenant.DriftReport as JSON; NULL when none ever was). Observed state:
-- updateObserved writes it.
ALTER TABLE tenants ADD COLUMN drift TEXT CHECK (drift IS NULL OR json_valid(drift));

-- +goose Down
ALTER TABLE tenants DROP COLUMN drift;
