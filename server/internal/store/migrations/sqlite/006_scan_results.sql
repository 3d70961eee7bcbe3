-- Vulnerability scan results, one row per scanner run; the newest row of an
-- image and scanner is its current result.

-- +goose Up
CREATE TABLE scan_results (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    environment_id  INTEGER REFERENCES environments (id) ON DELETE CASCADE,
    image_id        TEXT   NOT NULL,
    image_name      TEXT   NOT NULL,
    scanner         TEXT   NOT NULL,
    scanned_at      TEXT NOT NULL,
    result          TEXT   NOT NULL
);
CREATE INDEX scan_results_image_id ON scan_results (environment_id, image_id, scanner, scanned_at);
CREATE INDEX scan_results_image_name ON scan_results (environment_id, image_name, scanner, scanned_at);

-- +goose Down
DROP TABLE scan_results;
