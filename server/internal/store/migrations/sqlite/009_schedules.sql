-- Schedules: every run of a schedule as an execution; the update-check and
-- image-prune schedules of environments; the pending updates an update check
-- found.
--
-- A schedule runs at most once at a time and each cron tick runs once, even
-- with several Berth servers on one database: the partial unique index on
-- running executions and the one on (schedule, scheduled tick) decide which
-- insert wins. A running execution is held by its server (node) under a lease
-- that the server renews; one whose lease ran out is marked failed.

-- +goose Up
CREATE TABLE schedule_executions (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    schedule_type  TEXT    NOT NULL,
    schedule_id    INTEGER NOT NULL,
    environment_id INTEGER REFERENCES environments (id) ON DELETE SET NULL,
    entity_name    TEXT    NOT NULL DEFAULT '',
    triggered_by   TEXT    NOT NULL,
    scheduled_for  TEXT,
    triggered_at   TEXT    NOT NULL,
    started_at     TEXT,
    completed_at   TEXT,
    duration_ms    INTEGER,
    status         TEXT    NOT NULL,
    error_message  TEXT,
    details        TEXT,
    logs           TEXT    NOT NULL DEFAULT '',
    node           TEXT    NOT NULL DEFAULT '',
    lease_until    TEXT
);
CREATE UNIQUE INDEX schedule_executions_one_running
    ON schedule_executions (schedule_type, schedule_id) WHERE status = 'running';
CREATE UNIQUE INDEX schedule_executions_one_per_tick
    ON schedule_executions (schedule_type, schedule_id, scheduled_for) WHERE scheduled_for IS NOT NULL;
CREATE INDEX schedule_executions_schedule ON schedule_executions (schedule_type, schedule_id, id);
CREATE INDEX schedule_executions_triggered_at ON schedule_executions (triggered_at);

CREATE TABLE environment_schedules (
    environment_id         INTEGER NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    kind                   TEXT    NOT NULL,
    cron_expression        TEXT    NOT NULL,
    vulnerability_criteria TEXT    NOT NULL DEFAULT 'never',
    prune_mode             TEXT    NOT NULL DEFAULT 'dangling',
    created_at             TEXT    NOT NULL,
    updated_at             TEXT    NOT NULL,
    PRIMARY KEY (environment_id, kind)
);

CREATE TABLE pending_updates (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    environment_id   INTEGER NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    container_name   TEXT    NOT NULL,
    container_id     TEXT    NOT NULL,
    image            TEXT    NOT NULL,
    current_image_id TEXT    NOT NULL,
    new_digest       TEXT    NOT NULL,
    checked_at       TEXT    NOT NULL
);
CREATE UNIQUE INDEX pending_updates_env_container ON pending_updates (environment_id, container_name);

-- +goose Down
DROP TABLE pending_updates;
DROP TABLE environment_schedules;
DROP TABLE schedule_executions;
