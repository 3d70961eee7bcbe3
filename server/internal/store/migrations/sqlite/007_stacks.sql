-- Compose stacks Berth knows (internal, git, adopted external), their secret
-- variables (sealed; never written to files), and the git side: credentials
-- (secrets sealed), repositories and git stacks with their sync state and
-- auto-sync schedule record.

-- +goose Up
CREATE TABLE stacks (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    environment_id INTEGER NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
    name           TEXT    NOT NULL,
    source_type    TEXT    NOT NULL,
    compose_path   TEXT    NOT NULL DEFAULT '',
    env_path       TEXT    NOT NULL DEFAULT '',
    created_at     TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL,
    UNIQUE (environment_id, name)
);

CREATE TABLE stack_secrets (
    stack_id INTEGER NOT NULL REFERENCES stacks(id) ON DELETE CASCADE,
    key      TEXT    NOT NULL,
    value    TEXT    NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (stack_id, key)
);

CREATE TABLE git_credentials (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    name            TEXT NOT NULL UNIQUE,
    auth_type       TEXT NOT NULL,
    username        TEXT NOT NULL DEFAULT '',
    password        TEXT NOT NULL DEFAULT '',
    ssh_private_key TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);

CREATE TABLE git_repositories (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    name            TEXT    NOT NULL UNIQUE,
    url             TEXT    NOT NULL,
    branch          TEXT    NOT NULL,
    credential_id   INTEGER REFERENCES git_credentials(id),
    webhook_enabled INTEGER NOT NULL DEFAULT 0,
    webhook_secret  TEXT    NOT NULL DEFAULT '',
    last_sync_at    TEXT,
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL
);

CREATE TABLE git_stacks (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    stack_id         INTEGER NOT NULL UNIQUE REFERENCES stacks(id) ON DELETE CASCADE,
    repository_id    INTEGER NOT NULL REFERENCES git_repositories(id),
    compose_path     TEXT    NOT NULL,
    env_file_path    TEXT    NOT NULL DEFAULT '',
    auto_update      INTEGER NOT NULL DEFAULT 0,
    auto_update_cron TEXT    NOT NULL DEFAULT '',
    webhook_enabled  INTEGER NOT NULL DEFAULT 0,
    webhook_secret   TEXT    NOT NULL DEFAULT '',
    last_commit      TEXT    NOT NULL DEFAULT '',
    last_sync_at     TEXT,
    last_sync_status TEXT    NOT NULL DEFAULT '',
    last_sync_error  TEXT    NOT NULL DEFAULT '',
    created_at       TEXT    NOT NULL,
    updated_at       TEXT    NOT NULL
);

-- +goose Down
DROP TABLE git_stacks;
DROP TABLE git_repositories;
DROP TABLE git_credentials;
DROP TABLE stack_secrets;
DROP TABLE stacks;
