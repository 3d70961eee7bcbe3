-- Timestamps are TEXT in RFC 3339 with nanoseconds, always UTC, written and
-- read by the store itself (see formatTime / parseTime); booleans are 0 or 1.

-- +goose Up
CREATE TABLE environments (
    id                       INTEGER PRIMARY KEY AUTOINCREMENT,
    name                     TEXT    NOT NULL UNIQUE,
    connection_type          TEXT    NOT NULL DEFAULT 'socket',
    host                     TEXT    NOT NULL DEFAULT '',
    port                     INTEGER NOT NULL DEFAULT 0,
    protocol                 TEXT    NOT NULL DEFAULT 'http',
    socket_path              TEXT    NOT NULL DEFAULT '',
    tls_ca                   TEXT    NOT NULL DEFAULT '',
    tls_cert                 TEXT    NOT NULL DEFAULT '',
    tls_key                  TEXT    NOT NULL DEFAULT '',
    tls_skip_verify          INTEGER NOT NULL DEFAULT 0,
    agent_token              TEXT    NOT NULL DEFAULT '',
    agent_last_seen          TEXT,
    agent_id                 TEXT    NOT NULL DEFAULT '',
    agent_name               TEXT    NOT NULL DEFAULT '',
    agent_version            TEXT    NOT NULL DEFAULT '',
    agent_capabilities       TEXT    NOT NULL DEFAULT '[]',
    icon                     TEXT    NOT NULL DEFAULT '',
    labels                   TEXT    NOT NULL DEFAULT '[]',
    collect_activity         INTEGER NOT NULL DEFAULT 0,
    collect_metrics          INTEGER NOT NULL DEFAULT 0,
    highlight_changes        INTEGER NOT NULL DEFAULT 0,
    public_ip                TEXT,
    update_check_enabled     INTEGER NOT NULL DEFAULT 0,
    update_check_auto_update INTEGER NOT NULL DEFAULT 0,
    image_prune_enabled      INTEGER NOT NULL DEFAULT 0,
    timezone                 TEXT,
    created_at               TEXT    NOT NULL,
    updated_at               TEXT    NOT NULL
);

CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE auto_update_configs (
    id                     INTEGER PRIMARY KEY AUTOINCREMENT,
    container_name         TEXT    NOT NULL,
    environment_id         INTEGER REFERENCES environments (id) ON DELETE CASCADE,
    enabled                INTEGER NOT NULL DEFAULT 0,
    schedule_type          TEXT    NOT NULL DEFAULT 'daily',
    cron_expression        TEXT    NOT NULL DEFAULT '',
    vulnerability_criteria TEXT    NOT NULL DEFAULT 'never',
    created_at             TEXT    NOT NULL,
    updated_at             TEXT    NOT NULL
);

-- One row per (environment, container); a NULL environment counts as one value.
CREATE UNIQUE INDEX auto_update_configs_env_container
    ON auto_update_configs (COALESCE(environment_id, 0), container_name);
CREATE INDEX auto_update_configs_environment_id ON auto_update_configs (environment_id);

-- +goose Down
DROP TABLE auto_update_configs;
DROP TABLE settings;
DROP TABLE environments;
