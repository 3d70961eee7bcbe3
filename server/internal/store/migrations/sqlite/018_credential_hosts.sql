-- A git credential is sent only to the host it was saved for: host is the
-- origin (scheme://host:port) or a URL of it, '' while the credential is
-- bound to none (then only an admin's use binds it). A credential that
-- repositories already use is bound to the URL of the first of them.

-- +goose Up
ALTER TABLE git_credentials ADD COLUMN host TEXT NOT NULL DEFAULT '';
UPDATE git_credentials SET host = (SELECT r.url FROM git_repositories r WHERE r.credential_id = git_credentials.id ORDER BY r.id LIMIT 1)
WHERE EXISTS (SELECT 1 FROM git_repositories r WHERE r.credential_id = git_credentials.id);

-- +goose Down
ALTER TABLE git_credentials DROP COLUMN host;
