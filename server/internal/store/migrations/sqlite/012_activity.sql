-- Activity: the engine events of environments whose collectActivity is on,
-- collected by the activity collector and kept for a bounded time (the
-- activity retention) and number of rows.
--
-- Several Berth servers sharing the database each follow every environment:
-- the unique index makes one occurrence one row, whichever server stores it
-- first. The engine reports the time of an event to the second, so the same
-- action on the same object twice within one second is kept once.

-- +goose Up
CREATE TABLE activity_events (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    environment_id INTEGER NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    type           TEXT    NOT NULL,
    action         TEXT    NOT NULL,
    actor_id       TEXT    NOT NULL,
    actor_name     TEXT    NOT NULL DEFAULT '',
    occurred_at    TEXT    NOT NULL
);
CREATE UNIQUE INDEX activity_events_once
    ON activity_events (environment_id, occurred_at, type, action, actor_id);
CREATE INDEX activity_events_occurred_at ON activity_events (occurred_at);
CREATE INDEX activity_events_actor ON activity_events (environment_id, actor_name);

-- +goose Down
DROP TABLE activity_events;
