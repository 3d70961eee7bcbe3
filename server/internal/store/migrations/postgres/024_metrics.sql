-- Metrics history (issue 23, docs/scale.md): the samples of the CPU and
-- memory of every environment whose collectMetrics is on, shared by every
-- replica of the install, and one claim row per environment: which replica
-- took the latest sampling round and when, and the latest ranking of its
-- containers (top, JSON). A replica samples an environment only when it
-- claims the round, so that the engine is sampled once per round whatever
-- the number of replicas. The activity collector keeps the newest 120
-- samples of each environment; the rows go with the environment, and with
-- its collectMetrics switched off.

-- +goose Up
CREATE TABLE metric_samples (
    environment_id BIGINT           NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    sampled_at     TIMESTAMPTZ      NOT NULL,
    cpu_percent    DOUBLE PRECISION NOT NULL,
    memory_percent DOUBLE PRECISION NOT NULL,
    memory_used    BIGINT           NOT NULL,
    memory_total   BIGINT           NOT NULL,
    PRIMARY KEY (environment_id, sampled_at)
);

CREATE TABLE metric_claims (
    environment_id BIGINT      PRIMARY KEY REFERENCES environments (id) ON DELETE CASCADE,
    replica_id     TEXT        NOT NULL,
    claimed_at     TIMESTAMPTZ NOT NULL,
    top            TEXT        NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE metric_claims;
DROP TABLE metric_samples;
