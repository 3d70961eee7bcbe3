-- The notification outbox: one row per message a channel is to get, so that
-- delivery survives a restart and several Berth servers sharing the
-- database send each message once. A row is keyed by its channel and the
-- dedupe key of the event it carries (for an engine event: environment,
-- the engine's timeNano, actor and action), so that a second server
-- producing the same event inserts nothing. A server claims due rows for a
-- while (claimed_by, claimed_until), sends them, and marks each sent,
-- failed (after its last attempt) or due again later (next_attempt_at).
--
-- notification_state holds the states that decide a notification when
-- they change (an environment going offline, a disk crossing its warning
-- threshold): the server that changes one notifies, the others find it
-- changed already.

-- +goose Up
CREATE TABLE notification_outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id      INTEGER NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
    dedupe_key      TEXT    NOT NULL,
    event_type      TEXT    NOT NULL,
    payload         TEXT    NOT NULL,
    status          TEXT    NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT    NOT NULL,
    claimed_by      TEXT    NOT NULL DEFAULT '',
    claimed_until   TEXT,
    last_error      TEXT    NOT NULL DEFAULT '',
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL,
    UNIQUE (channel_id, dedupe_key)
);
CREATE INDEX notification_outbox_due ON notification_outbox (status, next_attempt_at);
CREATE INDEX notification_outbox_updated_at ON notification_outbox (updated_at);

CREATE TABLE notification_state (
    name       TEXT    PRIMARY KEY,
    value      TEXT    NOT NULL,
    updated_at TEXT    NOT NULL
);

-- +goose Down
DROP TABLE notification_state;
DROP TABLE notification_outbox;
