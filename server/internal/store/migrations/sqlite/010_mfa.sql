-- Multi-factor authentication (TOTP) of local accounts: each user's secret
-- (sealed by the store's secret box), an enrolment awaiting its first code,
-- the last time step a code was accepted for (a code is never accepted
-- twice), and the one-time backup codes, hashed like passwords (argon2id).
-- users.mfa_enabled mirrors whether secret is set.

-- +goose Up
CREATE TABLE user_mfa (
    user_id        INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    secret         TEXT    NOT NULL DEFAULT '',
    pending_secret TEXT    NOT NULL DEFAULT '',
    last_step      INTEGER NOT NULL DEFAULT 0,
    enabled_at     TEXT,
    updated_at     TEXT    NOT NULL
);

-- selector is the first characters of the code, kept in clear so that a
-- sign-in verifies one hash, not every one of the user's codes.
CREATE TABLE user_mfa_backup_codes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    selector   TEXT    NOT NULL,
    code_hash  TEXT    NOT NULL,
    used_at    TEXT,
    created_at TEXT    NOT NULL
);
CREATE INDEX user_mfa_backup_codes_user_selector ON user_mfa_backup_codes (user_id, selector);

-- +goose Down
DROP TABLE user_mfa_backup_codes;
DROP TABLE user_mfa;
