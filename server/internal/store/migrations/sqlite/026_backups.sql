-- Backups (issue 24): restic repositories (destinations), what is backed up
-- where and when (configurations), and the history of runs. Secrets of a
-- destination (password, extra restic environment as JSON, SSH key) are
-- sealed by the store's field encryption. A destination in use by a
-- configuration cannot be deleted (its foreign key has no ON DELETE
-- action); runs outlive the configurations and destinations they name. The
-- install's backup instance id (the berth:instance=<id> tag of its
-- snapshots) is the settings row "backup.instance_id", made once by the
-- store.

-- +goose Up
CREATE TABLE backup_destinations (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    name              TEXT    NOT NULL UNIQUE,
    type              TEXT    NOT NULL,
    repository        TEXT    NOT NULL,
    password          TEXT    NOT NULL DEFAULT '',
    env_vars          TEXT    NOT NULL DEFAULT '',
    ssh_key           TEXT    NOT NULL DEFAULT '',
    ssh_known_hosts   TEXT    NOT NULL DEFAULT '',
    flags             TEXT    NOT NULL DEFAULT '',
    host_path         TEXT    NOT NULL DEFAULT '',
    environment_id    INTEGER REFERENCES environments (id) ON DELETE SET NULL,
    policies          TEXT    NOT NULL DEFAULT '',
    last_test_status  TEXT    NOT NULL DEFAULT '',
    last_test_message TEXT    NOT NULL DEFAULT '',
    last_test_at      TEXT,
    created_at        TEXT    NOT NULL,
    updated_at        TEXT    NOT NULL
);

CREATE TABLE backup_configs (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    name               TEXT    NOT NULL DEFAULT '',
    type               TEXT    NOT NULL,
    target_name        TEXT    NOT NULL,
    environment_id     INTEGER NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    destination_id     INTEGER NOT NULL REFERENCES backup_destinations (id),
    all_volumes        INTEGER NOT NULL DEFAULT 1,
    volumes            TEXT    NOT NULL DEFAULT '[]',
    paths              TEXT    NOT NULL DEFAULT '[]',
    include_stack_dir  INTEGER NOT NULL DEFAULT 1,
    excludes           TEXT    NOT NULL DEFAULT '[]',
    tags               TEXT    NOT NULL DEFAULT '[]',
    options            TEXT    NOT NULL DEFAULT '{}',
    schedule           TEXT    NOT NULL DEFAULT '',
    enabled            INTEGER NOT NULL DEFAULT 1,
    retention          TEXT    NOT NULL DEFAULT '{}',
    stop_during_backup INTEGER NOT NULL DEFAULT 0,
    pre_hook           TEXT    NOT NULL DEFAULT '',
    post_hook          TEXT    NOT NULL DEFAULT '',
    hook_service       TEXT    NOT NULL DEFAULT '',
    last_run_status    TEXT    NOT NULL DEFAULT '',
    last_run_message   TEXT    NOT NULL DEFAULT '',
    last_run_at        TEXT,
    created_at         TEXT    NOT NULL,
    updated_at         TEXT    NOT NULL
);
CREATE INDEX backup_configs_destination ON backup_configs (destination_id);
CREATE INDEX backup_configs_environment ON backup_configs (environment_id);

CREATE TABLE backup_runs (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    config_id      INTEGER REFERENCES backup_configs (id) ON DELETE SET NULL,
    destination_id INTEGER REFERENCES backup_destinations (id) ON DELETE SET NULL,
    environment_id INTEGER REFERENCES environments (id) ON DELETE SET NULL,
    kind           TEXT    NOT NULL,
    status         TEXT    NOT NULL,
    snapshot_id    TEXT    NOT NULL DEFAULT '',
    files          INTEGER NOT NULL DEFAULT 0,
    bytes          INTEGER NOT NULL DEFAULT 0,
    message        TEXT    NOT NULL DEFAULT '',
    started_at     TEXT    NOT NULL,
    finished_at    TEXT,
    job_id         TEXT    NOT NULL DEFAULT '',
    node           TEXT    NOT NULL DEFAULT '',
    -- the containers a run stopped and has not started again (JSON ids):
    -- started by the next Berth to start when the run was interrupted
    stopped_containers TEXT NOT NULL DEFAULT ''
);
CREATE INDEX backup_runs_config ON backup_runs (config_id, started_at);
CREATE INDEX backup_runs_destination ON backup_runs (destination_id, started_at);

-- +goose Down
DROP TABLE backup_runs;
DROP TABLE backup_configs;
DROP TABLE backup_destinations;
