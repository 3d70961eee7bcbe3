-- What a terminal session needs to start on whichever replica attaches it
-- (issue 23): a Hawser edge agent has no exec to create ahead, the session
-- is opened at attach time from the container, command, user and terminal
-- size the creating replica recorded. Nothing secret.

-- +goose Up
ALTER TABLE exec_sessions ADD COLUMN container_id TEXT NOT NULL DEFAULT '';
ALTER TABLE exec_sessions ADD COLUMN cmd TEXT NOT NULL DEFAULT '';
ALTER TABLE exec_sessions ADD COLUMN exec_user TEXT NOT NULL DEFAULT '';
ALTER TABLE exec_sessions ADD COLUMN tty_rows INTEGER NOT NULL DEFAULT 0;
ALTER TABLE exec_sessions ADD COLUMN tty_cols INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE exec_sessions DROP COLUMN tty_cols;
ALTER TABLE exec_sessions DROP COLUMN tty_rows;
ALTER TABLE exec_sessions DROP COLUMN exec_user;
ALTER TABLE exec_sessions DROP COLUMN cmd;
ALTER TABLE exec_sessions DROP COLUMN container_id;
