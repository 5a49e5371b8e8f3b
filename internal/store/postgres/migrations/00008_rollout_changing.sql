-- +goose Up
-- The members still changing, alone: the rollout driver looks for them in
-- every rollout (fleet.RolloutListOptions.Unsettled), finished ones too, as
-- an abort without rollback leaves the tenants it changed converging. A
-- member's change of state is not HOT (its state is indexed here), and a
-- member changes state about three times.
CREATE INDEX rollout_members_changing_idx ON rollout_members (rollout_id) WHERE state = 'changing';

-- +goose Down
DROP INDEX rollout_members_changing_idx;
