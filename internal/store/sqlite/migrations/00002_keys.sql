-- +goose Up
-- Random keys of this installation (see tenant.KeyStore), created on first use.
CREATE TABLE install_keys (
    name       TEXT    PRIMARY KEY,
    key        BLOB    NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

-- +goose Down
DROP TABLE install_keys;
