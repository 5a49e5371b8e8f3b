-- +goose Up
-- A request reserves its Idempotency-Key before it does anything: a row with
-- status 0 (pending) and a token naming the reservation, completed with the
-- response in the transaction of the request's write (see idempotency.go).
-- Rows from before are complete responses; their token stays empty.
ALTER TABLE idempotency_keys ADD COLUMN token text NOT NULL DEFAULT '';

-- +goose Down
-- Older code reads every row as a response: pending ones go.
DELETE FROM idempotency_keys WHERE status = 0;
ALTER TABLE idempotency_keys DROP COLUMN token;
