-- The outcome of the last fetch of a repository's branch into its mirror
-- (a sync, a git stack test, the env file helpers), kept with the
-- repository so that every server, and a restarted one, tells the same
-- status. fetched_at is NULL while the repository was never fetched.

-- +goose Up
ALTER TABLE git_repositories ADD COLUMN fetched_at TIMESTAMPTZ;
ALTER TABLE git_repositories ADD COLUMN fetch_branch TEXT NOT NULL DEFAULT '';
ALTER TABLE git_repositories ADD COLUMN fetch_status TEXT NOT NULL DEFAULT '';
ALTER TABLE git_repositories ADD COLUMN fetch_commit TEXT NOT NULL DEFAULT '';
ALTER TABLE git_repositories ADD COLUMN fetch_error TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE git_repositories DROP COLUMN fetch_error;
ALTER TABLE git_repositories DROP COLUMN fetch_commit;
ALTER TABLE git_repositories DROP COLUMN fetch_status;
ALTER TABLE git_repositories DROP COLUMN fetch_branch;
ALTER TABLE git_repositories DROP COLUMN fetched_at;
