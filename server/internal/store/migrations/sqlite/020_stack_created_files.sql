-- The files and directories Berth created for a stack (a JSON list of
-- absolute paths): deleting the stack removes those and nothing else, so
-- that a compose or env path naming a file that was already there never
-- takes that file with it. NULL for stacks recorded before the list was
-- kept: their files outside Berth's own stack directory are left alone.

-- +goose Up
ALTER TABLE stacks ADD COLUMN created_files TEXT;

-- +goose Down
ALTER TABLE stacks DROP COLUMN created_files;
