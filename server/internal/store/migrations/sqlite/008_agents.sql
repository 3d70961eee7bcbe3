-- Edge agents: the environment's edge token, stored as its SHA-256 digest
-- (hex) only; the token itself is shown once, when it is generated. A
-- digest is unique (it is how a connecting agent finds its environment).

-- +goose Up
ALTER TABLE environments ADD COLUMN agent_token_hash TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX environments_agent_token_hash ON environments (agent_token_hash) WHERE agent_token_hash <> '';

-- +goose Down
DROP INDEX environments_agent_token_hash;
ALTER TABLE environments DROP COLUMN agent_token_hash;
