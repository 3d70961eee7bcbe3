-- App template sources (URLs or local files of Portainer-format template
-- lists, with the outcome of their last fetch), config sets (reusable
-- container settings; secret values sealed by the store's field encryption
-- inside env_vars) and labels (names and colours of environment labels).

-- +goose Up
CREATE TABLE template_sources (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    name            TEXT    NOT NULL UNIQUE,
    url             TEXT    NOT NULL,
    enabled         INTEGER NOT NULL DEFAULT 1,
    last_error      TEXT    NOT NULL DEFAULT '',
    last_fetched_at TEXT,
    template_count  INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL
);

CREATE TABLE config_sets (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT    NOT NULL UNIQUE,
    description    TEXT    NOT NULL DEFAULT '',
    env_vars       TEXT    NOT NULL DEFAULT '[]',
    labels         TEXT    NOT NULL DEFAULT '{}',
    ports          TEXT    NOT NULL DEFAULT '[]',
    volumes        TEXT    NOT NULL DEFAULT '[]',
    network_mode   TEXT    NOT NULL DEFAULT '',
    restart_policy TEXT    NOT NULL DEFAULT '',
    created_at     TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL
);

CREATE TABLE labels (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT    NOT NULL UNIQUE,
    color      TEXT    NOT NULL DEFAULT '',
    created_at TEXT    NOT NULL
);

-- +goose Down
DROP TABLE labels;
DROP TABLE config_sets;
DROP TABLE template_sources;
