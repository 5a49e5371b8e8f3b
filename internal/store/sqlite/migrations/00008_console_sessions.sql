-- +goose Up
-- The web console's sessions (identity.SessionStore): a session's cookie is
-- honoured only while its row is here, so that signing out on one replica
-- ends it on every replica. Neither the bearer token nor anything that opens
-- the cookie is stored. Times are microseconds since 1970, UTC.
CREATE TABLE console_sessions (
    id         TEXT    PRIMARY KEY,
    holder     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX console_sessions_holder ON console_sessions (holder);
CREATE INDEX console_sessions_expires_at ON console_sessions (expires_at);

-- +goose Down
DROP TABLE console_sessions;
