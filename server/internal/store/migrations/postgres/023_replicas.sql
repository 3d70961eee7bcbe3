-- Replicas (issue 23, docs/scale.md): several Berth servers on one
-- PostgreSQL database. Each live replica keeps a row renewed every few
-- seconds; an edge agent's connection is held by one replica, named by the
-- environment's lease (a lease is live while its replica's row is); an
-- operation received by another replica is relayed to the holder. Terminal
-- sessions and jobs are found whichever replica a follow-up request reaches.

-- +goose Up
CREATE TABLE replicas (
    id          TEXT        PRIMARY KEY,
    http_url    TEXT        NOT NULL,
    relay_addr  TEXT        NOT NULL,
    started_at  TIMESTAMPTZ NOT NULL,
    renewed_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE agent_leases (
    environment_id BIGINT      PRIMARY KEY REFERENCES environments (id) ON DELETE CASCADE,
    replica_id     TEXT        NOT NULL,
    agent_id       TEXT        NOT NULL DEFAULT '',
    agent_name     TEXT        NOT NULL DEFAULT '',
    agent_version  TEXT        NOT NULL DEFAULT '',
    capabilities   TEXT        NOT NULL DEFAULT '[]',
    remote         TEXT        NOT NULL DEFAULT '',
    connected_at   TIMESTAMPTZ NOT NULL,
    claimed_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX agent_leases_replica ON agent_leases (replica_id);
CREATE INDEX agent_leases_claimed ON agent_leases (claimed_at);

CREATE TABLE exec_sessions (
    exec_id        TEXT        PRIMARY KEY,
    environment_id BIGINT      NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    owner_id       BIGINT      NOT NULL DEFAULT 0,
    tty            BOOLEAN     NOT NULL DEFAULT TRUE,
    created_at     TIMESTAMPTZ NOT NULL,
    attached_at    TIMESTAMPTZ
);
CREATE INDEX exec_sessions_created ON exec_sessions (created_at);

CREATE TABLE job_owners (
    job_id     TEXT        PRIMARY KEY,
    replica_id TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX job_owners_created ON job_owners (created_at);

-- +goose Down
DROP TABLE job_owners;
DROP TABLE exec_sessions;
DROP TABLE agent_leases;
DROP TABLE replicas;
