-- Users, their sessions and API tokens, roles and their assignments, and the
-- audit log. Timestamps and booleans as in 001_init.sql.

-- +goose Up
CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    username      TEXT    NOT NULL,
    email         TEXT    NOT NULL DEFAULT '',
    display_name  TEXT    NOT NULL DEFAULT '',
    password_hash TEXT    NOT NULL DEFAULT '',
    is_admin      INTEGER NOT NULL DEFAULT 0,
    is_active     INTEGER NOT NULL DEFAULT 1,
    auth_provider TEXT    NOT NULL DEFAULT 'local',
    mfa_enabled   INTEGER NOT NULL DEFAULT 0,
    last_login    TEXT,
    created_at    TEXT    NOT NULL,
    updated_at    TEXT    NOT NULL
);

-- Usernames keep their case but are unique regardless of it.
CREATE UNIQUE INDEX users_username_lower ON users (lower(username));

-- id is the hex SHA-256 of the cookie token; the token is never stored.
CREATE TABLE sessions (
    id           TEXT    PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider     TEXT    NOT NULL DEFAULT 'local',
    created_at   TEXT    NOT NULL,
    expires_at   TEXT    NOT NULL,
    last_seen_at TEXT    NOT NULL,
    ip           TEXT    NOT NULL DEFAULT '',
    user_agent   TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX sessions_user_id ON sessions (user_id);
CREATE INDEX sessions_expires_at ON sessions (expires_at);

CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL DEFAULT '',
    token_hash   TEXT    NOT NULL UNIQUE,
    token_prefix TEXT    NOT NULL DEFAULT '',
    expires_at   TEXT,
    last_used_at TEXT,
    created_at   TEXT    NOT NULL
);
CREATE INDEX api_tokens_user_id ON api_tokens (user_id);

-- permissions is a JSON object of resource -> actions; environment_ids a JSON
-- array, or NULL for every environment.
CREATE TABLE roles (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    name            TEXT    NOT NULL UNIQUE,
    description     TEXT    NOT NULL DEFAULT '',
    permissions     TEXT    NOT NULL DEFAULT '{}',
    environment_ids TEXT,
    is_system       INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL
);

CREATE TABLE user_roles (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id        INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role_id        INTEGER NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    environment_id INTEGER REFERENCES environments (id) ON DELETE CASCADE,
    source         TEXT    NOT NULL DEFAULT 'manual',
    created_at     TEXT    NOT NULL
);

-- One row per (user, role, environment); a NULL environment counts as one value.
CREATE UNIQUE INDEX user_roles_user_role_env
    ON user_roles (user_id, role_id, COALESCE(environment_id, 0));
CREATE INDEX user_roles_role_id ON user_roles (role_id);
CREATE INDEX user_roles_environment_id ON user_roles (environment_id);

-- No foreign keys: the log outlives the users and environments it names.
CREATE TABLE audit_log (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at     TEXT    NOT NULL,
    user_id        INTEGER,
    username       TEXT    NOT NULL DEFAULT '',
    environment_id INTEGER,
    action         TEXT    NOT NULL,
    entity_type    TEXT    NOT NULL DEFAULT '',
    entity_id      TEXT    NOT NULL DEFAULT '',
    entity_name    TEXT    NOT NULL DEFAULT '',
    description    TEXT    NOT NULL DEFAULT '',
    details        TEXT    NOT NULL DEFAULT '',
    ip             TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_created_at ON audit_log (created_at);
CREATE INDEX audit_log_user_id ON audit_log (user_id);
CREATE INDEX audit_log_environment_id ON audit_log (environment_id);
CREATE INDEX audit_log_action ON audit_log (action);

-- +goose Down
DROP TABLE audit_log;
DROP TABLE user_roles;
DROP TABLE roles;
DROP TABLE api_tokens;
DROP TABLE sessions;
DROP TABLE users;
