package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Environment is a Docker engine Berth manages, and how to reach it.
// TLSKey and AgentToken are plaintext here and encrypted at rest.
type Environment struct {
	ID                    int64
	Name                  string
	ConnectionType        string // socket | direct | agent-standard | agent-edge
	Host                  string
	Port                  int
	Protocol              string // http | https
	SocketPath            string
	TLSCA                 string
	TLSCert               string
	TLSKey                string
	TLSSkipVerify         bool
	AgentToken            string
	AgentLastSeen         *time.Time
	AgentID               string
	AgentName             string
	AgentVersion          string
	AgentCapabilities     []string // never nil when read
	Icon                  string
	Labels                []string // never nil when read
	CollectActivity       bool
	CollectMetrics        bool
	HighlightChanges      bool
	PublicIP              *string
	UpdateCheckEnabled    bool
	UpdateCheckAutoUpdate bool
	ImagePruneEnabled     bool
	Timezone              *string
	CreatedAt             time.Time // UTC
	UpdatedAt             time.Time // UTC
}

// bootstrapSetting records that the first environment was created once, so
// that deleting it does not bring it back at the next start.
const bootstrapSetting = "bootstrap.local_environment"

// environmentColumns is the column list scanEnvironment reads, in its order.
const environmentColumns = `id, name, connection_type, host, port, protocol, socket_path,
	tls_ca, tls_cert, tls_key, tls_skip_verify, agent_token, agent_last_seen,
	agent_id, agent_name, agent_version, agent_capabilities, icon, labels,
	collect_activity, collect_metrics, highlight_changes, public_ip,
	update_check_enabled, update_check_auto_update, image_prune_enabled, timezone,
	created_at, updated_at`

// ListEnvironments returns every environment ordered by id.
func (s *Store) ListEnvironments(ctx context.Context) ([]Environment, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+environmentColumns+` FROM environments ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: list environments: %w", err)
	}
	defer rows.Close()
	envs := []Environment{}
	for rows.Next() {
		e, err := s.scanEnvironment(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list environments: %w", err)
		}
		envs = append(envs, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list environments: %w", err)
	}
	return envs, nil
}

// GetEnvironment returns the environment with the given id, or ErrNotFound.
func (s *Store) GetEnvironment(ctx context.Context, id int64) (Environment, error) {
	row := s.db.QueryRowContext(ctx, s.rebind(`SELECT `+environmentColumns+` FROM environments WHERE id = ?`), id)
	e, err := s.scanEnvironment(row)
	if err != nil {
		return Environment{}, fmt.Errorf("store: get environment %d: %w", id, translate(err))
	}
	return e, nil
}

// GetEnvironmentByName returns the environment with the given name, or ErrNotFound.
func (s *Store) GetEnvironmentByName(ctx context.Context, name string) (Environment, error) {
	row := s.db.QueryRowContext(ctx, s.rebind(`SELECT `+environmentColumns+` FROM environments WHERE name = ?`), name)
	e, err := s.scanEnvironment(row)
	if err != nil {
		return Environment{}, fmt.Errorf("store: get environment %q: %w", name, translate(err))
	}
	return e, nil
}

// CreateEnvironment inserts e and sets its ID, CreatedAt and UpdatedAt.
// A duplicate name is ErrConflict.
func (s *Store) CreateEnvironment(ctx context.Context, e *Environment) error {
	args, err := s.environmentArgs(e)
	if err != nil {
		return fmt.Errorf("store: create environment %q: %w", e.Name, err)
	}
	t := now()
	args = append(args, s.timeArg(t), s.timeArg(t))
	var id int64
	err = s.db.QueryRowContext(ctx, s.rebind(`
		INSERT INTO environments (name, connection_type, host, port, protocol, socket_path,
			tls_ca, tls_cert, tls_key, tls_skip_verify, agent_token, agent_last_seen,
			agent_id, agent_name, agent_version, agent_capabilities, icon, labels,
			collect_activity, collect_metrics, highlight_changes, public_ip,
			update_check_enabled, update_check_auto_update, image_prune_enabled, timezone,
			created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?,
			?, ?, ?, ?, ?, ?,
			?, ?, ?, ?, ?, ?,
			?, ?, ?, ?,
			?, ?, ?, ?,
			?, ?)
		RETURNING id`), args...).Scan(&id)
	if err != nil {
		return fmt.Errorf("store: create environment %q: %w", e.Name, translate(err))
	}
	e.ID, e.CreatedAt, e.UpdatedAt = id, t, t
	return nil
}

// CreateFirstEnvironment inserts e with id 1, in one transaction, when there
// is no environment and none was ever bootstrapped; it then records the
// bootstrap so that it happens at most once. created is false when it did
// nothing.
func (s *Store) CreateFirstEnvironment(ctx context.Context, e *Environment) (created bool, err error) {
	args, err := s.environmentArgs(e)
	if err != nil {
		return false, fmt.Errorf("store: create first environment: %w", err)
	}
	t := now()
	args = append([]any{int64(1)}, args...)
	args = append(args, s.timeArg(t), s.timeArg(t))
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if s.dialect == dialectPostgres {
			// Keep concurrent inserts (another replica bootstrapping, or a
			// CreateEnvironment) out until we commit. SQLite transactions
			// already hold the write lock (_txlock=immediate).
			if _, err := tx.ExecContext(ctx, `LOCK TABLE environments IN EXCLUSIVE MODE`); err != nil {
				return err
			}
		}
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM environments)`).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return nil
		}
		switch _, err := s.getSetting(ctx, tx, bootstrapSetting); {
		case err == nil:
			return nil
		case !errors.Is(err, ErrNotFound):
			return err
		}
		_, err := tx.ExecContext(ctx, s.rebind(`
			INSERT INTO environments (id, name, connection_type, host, port, protocol, socket_path,
				tls_ca, tls_cert, tls_key, tls_skip_verify, agent_token, agent_last_seen,
				agent_id, agent_name, agent_version, agent_capabilities, icon, labels,
				collect_activity, collect_metrics, highlight_changes, public_ip,
				update_check_enabled, update_check_auto_update, image_prune_enabled, timezone,
				created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?,
				?, ?, ?, ?, ?, ?,
				?, ?, ?, ?, ?, ?,
				?, ?, ?, ?,
				?, ?, ?, ?,
				?, ?)`), args...)
		if err != nil {
			return translate(err)
		}
		if s.dialect == dialectPostgres {
			// An explicit id does not advance the identity sequence.
			_, err := tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('environments', 'id'),
				(SELECT MAX(id) FROM environments))`)
			if err != nil {
				return err
			}
		}
		if err := s.setSetting(ctx, tx, bootstrapSetting, "done"); err != nil {
			return err
		}
		created = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: create first environment: %w", err)
	}
	if created {
		e.ID, e.CreatedAt, e.UpdatedAt = 1, t, t
	}
	return created, nil
}

// UpdateEnvironment writes every field of e to the environment with e.ID and
// sets e.UpdatedAt (and e.CreatedAt from the row). A missing environment is
// ErrNotFound; a name taken by another environment is ErrConflict.
func (s *Store) UpdateEnvironment(ctx context.Context, e *Environment) error {
	args, err := s.environmentArgs(e)
	if err != nil {
		return fmt.Errorf("store: update environment %d: %w", e.ID, err)
	}
	t := now()
	args = append(args, s.timeArg(t), e.ID)
	var created dbTime
	err = s.db.QueryRowContext(ctx, s.rebind(`
		UPDATE environments SET name = ?, connection_type = ?, host = ?, port = ?, protocol = ?,
			socket_path = ?, tls_ca = ?, tls_cert = ?, tls_key = ?, tls_skip_verify = ?,
			agent_token = ?, agent_last_seen = ?, agent_id = ?, agent_name = ?, agent_version = ?,
			agent_capabilities = ?, icon = ?, labels = ?, collect_activity = ?, collect_metrics = ?,
			highlight_changes = ?, public_ip = ?, update_check_enabled = ?,
			update_check_auto_update = ?, image_prune_enabled = ?, timezone = ?, updated_at = ?
		WHERE id = ?
		RETURNING created_at`), args...).Scan(&created)
	if err != nil {
		return fmt.Errorf("store: update environment %d: %w", e.ID, translate(err))
	}
	e.CreatedAt, e.UpdatedAt = created.Time, t
	return nil
}

// DeleteEnvironment deletes the environment with the given id, and with it
// its auto-update configurations and the role assignments scoped to it. A
// missing environment is ErrNotFound.
func (s *Store) DeleteEnvironment(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, s.rebind(`DELETE FROM environments WHERE id = ?`), id)
	if err != nil {
		return fmt.Errorf("store: delete environment %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: delete environment %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("store: delete environment %d: %w", id, ErrNotFound)
	}
	return nil
}

// environmentArgs returns the values of e's writable columns, from name to
// timezone in table order, with the secrets encrypted.
func (s *Store) environmentArgs(e *Environment) ([]any, error) {
	tlsKey, err := s.box.Encrypt(e.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("encrypt tls key: %w", err)
	}
	agentToken, err := s.box.Encrypt(e.AgentToken)
	if err != nil {
		return nil, fmt.Errorf("encrypt agent token: %w", err)
	}
	capabilities, err := jsonList(e.AgentCapabilities)
	if err != nil {
		return nil, fmt.Errorf("agent capabilities: %w", err)
	}
	labels, err := jsonList(e.Labels)
	if err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	return []any{
		e.Name, e.ConnectionType, e.Host, e.Port, e.Protocol, e.SocketPath,
		e.TLSCA, e.TLSCert, tlsKey, e.TLSSkipVerify, agentToken, s.nullTimeArg(e.AgentLastSeen),
		e.AgentID, e.AgentName, e.AgentVersion, capabilities, e.Icon, labels,
		e.CollectActivity, e.CollectMetrics, e.HighlightChanges, nullString(e.PublicIP),
		e.UpdateCheckEnabled, e.UpdateCheckAutoUpdate, e.ImagePruneEnabled, nullString(e.Timezone),
	}, nil
}

// scanEnvironment reads one row of environmentColumns.
func (s *Store) scanEnvironment(row rowScanner) (Environment, error) {
	var (
		e                          Environment
		tlsKey, agentToken         string
		capabilities, labels       string
		lastSeen, created, updated dbTime
		publicIP, timezone         sql.NullString
	)
	err := row.Scan(&e.ID, &e.Name, &e.ConnectionType, &e.Host, &e.Port, &e.Protocol, &e.SocketPath,
		&e.TLSCA, &e.TLSCert, &tlsKey, &e.TLSSkipVerify, &agentToken, &lastSeen,
		&e.AgentID, &e.AgentName, &e.AgentVersion, &capabilities, &e.Icon, &labels,
		&e.CollectActivity, &e.CollectMetrics, &e.HighlightChanges, &publicIP,
		&e.UpdateCheckEnabled, &e.UpdateCheckAutoUpdate, &e.ImagePruneEnabled, &timezone,
		&created, &updated)
	if err != nil {
		return Environment{}, err
	}
	if e.TLSKey, err = s.box.Decrypt(tlsKey); err != nil {
		return Environment{}, fmt.Errorf("environment %d: tls key: %w", e.ID, err)
	}
	if e.AgentToken, err = s.box.Decrypt(agentToken); err != nil {
		return Environment{}, fmt.Errorf("environment %d: agent token: %w", e.ID, err)
	}
	if e.AgentCapabilities, err = parseList(capabilities); err != nil {
		return Environment{}, fmt.Errorf("environment %d: agent capabilities: %w", e.ID, err)
	}
	if e.Labels, err = parseList(labels); err != nil {
		return Environment{}, fmt.Errorf("environment %d: labels: %w", e.ID, err)
	}
	e.AgentLastSeen = lastSeen.ptr()
	e.PublicIP = stringPtr(publicIP)
	e.Timezone = stringPtr(timezone)
	e.CreatedAt, e.UpdatedAt = created.Time, updated.Time
	return e, nil
}

// jsonList encodes a list as JSON text; nil becomes [].
func jsonList(l []string) (string, error) {
	if l == nil {
		l = []string{}
	}
	b, err := json.Marshal(l)
	return string(b), err
}

// parseList decodes JSON text written by jsonList, never returning nil.
func parseList(s string) ([]string, error) {
	l := []string{}
	if s == "" {
		return l, nil
	}
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		return nil, err
	}
	if l == nil { // the text was "null"
		l = []string{}
	}
	return l, nil
}

// nullString is a nullable string column's query argument.
func nullString(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func stringPtr(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	return &n.String
}
