-- The outcome of a registry's last connection test, kept so the registries
-- list shows it after a reload: when it ran, whether it succeeded, and its
-- message. NULL tested_at: never tested (or changed since).

-- +goose Up
ALTER TABLE registries ADD COLUMN last_test_at TIMESTAMPTZ;
ALTER TABLE registries ADD COLUMN last_test_ok BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE registries ADD COLUMN last_test_message TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE registries DROP COLUMN last_test_message;
ALTER TABLE registries DROP COLUMN last_test_ok;
ALTER TABLE registries DROP COLUMN last_test_at;
