-- Directory (LDAP) sign-in configurations, an enterprise feature. bind_password
-- is sealed by the store's secret box; role_mappings is a JSON array of
-- {groupDn, roleId}. Timestamps and booleans as in 001_init.sql.

-- +goose Up
CREATE TABLE ldap_configs (
    id                     INTEGER PRIMARY KEY AUTOINCREMENT,
    name                   TEXT    NOT NULL UNIQUE,
    enabled                INTEGER NOT NULL DEFAULT 0,
    server_url             TEXT    NOT NULL,
    bind_dn                TEXT    NOT NULL DEFAULT '',
    bind_password          TEXT    NOT NULL DEFAULT '',
    base_dn                TEXT    NOT NULL,
    user_filter            TEXT    NOT NULL DEFAULT '(uid={{username}})',
    username_attribute     TEXT    NOT NULL DEFAULT 'uid',
    email_attribute        TEXT    NOT NULL DEFAULT 'mail',
    display_name_attribute TEXT    NOT NULL DEFAULT 'cn',
    group_base_dn          TEXT    NOT NULL DEFAULT '',
    group_filter           TEXT    NOT NULL DEFAULT '',
    admin_group            TEXT    NOT NULL DEFAULT '',
    role_mappings          TEXT    NOT NULL DEFAULT '[]',
    tls_enabled            INTEGER NOT NULL DEFAULT 0,
    tls_ca                 TEXT    NOT NULL DEFAULT '',
    created_at             TEXT    NOT NULL,
    updated_at             TEXT    NOT NULL
);

-- +goose Down
DROP TABLE ldap_configs;
