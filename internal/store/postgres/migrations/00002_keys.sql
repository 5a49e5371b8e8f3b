-- +goose Up
-- Random keys of this installation (see tenant.KeyStore), created on first use.
CREATE TABLE install_keys (
    name       text        PRIMARY KEY,
    key        bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE install_keys;
