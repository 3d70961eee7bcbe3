-- OpenID Connect identity providers. client_secret is sealed by the store's
-- field encryption; role_mappings is JSON [{"claimValue": …, "roleId": …}].

-- +goose Up
CREATE TABLE oidc_providers (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    name                 TEXT    NOT NULL UNIQUE,
    enabled              INTEGER NOT NULL DEFAULT 0,
    issuer_url           TEXT    NOT NULL,
    client_id            TEXT    NOT NULL,
    client_secret        TEXT    NOT NULL DEFAULT '',
    redirect_uri         TEXT    NOT NULL,
    scopes               TEXT    NOT NULL DEFAULT 'openid profile email',
    username_claim       TEXT    NOT NULL DEFAULT 'preferred_username',
    email_claim          TEXT    NOT NULL DEFAULT 'email',
    display_name_claim   TEXT    NOT NULL DEFAULT 'name',
    admin_claim          TEXT    NOT NULL DEFAULT '',
    admin_value          TEXT    NOT NULL DEFAULT '',
    role_mappings_claim  TEXT    NOT NULL DEFAULT 'groups',
    role_mappings        TEXT    NOT NULL DEFAULT '[]',
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL
);

-- +goose Down
DROP TABLE oidc_providers;
