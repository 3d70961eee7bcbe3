-- Hawser edge agents (the reference's agent): their tokens, one active per
-- environment (a new token revokes the older ones). The token itself is
-- shown once; the row keeps its Argon2id hash (PHC string) and its first 8
-- characters, by which a connecting agent's token is looked up.

-- +goose Up
CREATE TABLE hawser_tokens (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    environment_id INTEGER NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    name           TEXT    NOT NULL DEFAULT '',
    token_prefix   TEXT    NOT NULL,
    token_hash     TEXT    NOT NULL,
    is_active      BOOLEAN NOT NULL DEFAULT TRUE,
    last_used      TEXT,
    expires_at     TEXT,
    created_at     TEXT    NOT NULL
);
CREATE INDEX hawser_tokens_prefix ON hawser_tokens (token_prefix);
CREATE INDEX hawser_tokens_environment ON hawser_tokens (environment_id);

-- +goose Down
DROP TABLE hawser_tokens;
