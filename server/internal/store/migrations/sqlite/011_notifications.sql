-- Notification channels (config sealed whole by the store's field
-- encryption: it holds passwords, tokens and webhook URLs) and the
-- subscriptions of environments to them.

-- +goose Up
CREATE TABLE notification_channels (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    type          TEXT    NOT NULL,
    name          TEXT    NOT NULL UNIQUE,
    enabled       INTEGER NOT NULL DEFAULT 1,
    config        TEXT    NOT NULL DEFAULT '',
    event_types   TEXT    NOT NULL DEFAULT '[]',
    last_error    TEXT    NOT NULL DEFAULT '',
    last_error_at TEXT,
    last_sent_at  TEXT,
    created_at    TEXT    NOT NULL,
    updated_at    TEXT    NOT NULL
);

CREATE TABLE environment_notifications (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    environment_id  INTEGER NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    notification_id INTEGER NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
    enabled         INTEGER NOT NULL DEFAULT 1,
    event_types     TEXT    NOT NULL DEFAULT '[]',
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL,
    UNIQUE (environment_id, notification_id)
);

-- +goose Down
DROP TABLE environment_notifications;
DROP TABLE notification_channels;
