-- Per-user preferences: one JSON object per user and scope ("profile" for
-- the console's general preferences, "dashboard" for the dashboard's). User
-- 0 is the anonymous user of an instance with authentication disabled, so
-- user_id is not a foreign key.

-- +goose Up
CREATE TABLE user_preferences (
    user_id    bigint      NOT NULL,
    scope      text        NOT NULL,
    value      text        NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, scope)
);

-- +goose Down
DROP TABLE user_preferences;
