-- Uploaded pictures: an environment's icon and a user's avatar, small
-- images (PNG, JPEG, SVG or WebP) kept with their content type. Each goes
-- with its environment or user.

-- +goose Up
CREATE TABLE environment_icons (
    environment_id INTEGER PRIMARY KEY REFERENCES environments (id) ON DELETE CASCADE,
    content_type   TEXT    NOT NULL,
    data           BLOB    NOT NULL,
    updated_at     TEXT    NOT NULL
);
CREATE TABLE user_avatars (
    user_id      INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    content_type TEXT    NOT NULL,
    data         BLOB    NOT NULL,
    updated_at   TEXT    NOT NULL
);

-- +goose Down
DROP TABLE user_avatars;
DROP TABLE environment_icons;
