-- Stack locks across replicas (issue 23, docs/scale.md): an operation on a
-- stack (deploy, lifecycle action, edit of its files, repair) holds the
-- stack's row here while it runs, so that two replicas never run one
-- stack's operations at once. A lock is live while its replica's row is
-- (a replica that died frees its locks when its row expires).

-- +goose Up
CREATE TABLE stack_locks (
    environment_id INTEGER     NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    name           TEXT        NOT NULL,
    replica_id     TEXT        NOT NULL,
    holder         TEXT        NOT NULL,
    acquired_at    TEXT        NOT NULL,
    PRIMARY KEY (environment_id, name)
);
CREATE INDEX stack_locks_replica ON stack_locks (replica_id);

-- +goose Down
DROP TABLE stack_locks;
