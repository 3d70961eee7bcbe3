package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
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
	AgentTokenHash        string // edge: SHA-256 (hex) of the edge token; the token itself is never stored
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

// environmentRow is a row of the environments table: the secrets sealed, the
// lists as JSON text.
type environmentRow struct {
	ID                    int64
	Name                  string
	ConnectionType        string
	Host                  string
	Port                  int
	Protocol              string
	SocketPath            string
	TLSCA                 string `gorm:"column:tls_ca"`
	TLSCert               string `gorm:"column:tls_cert"`
	TLSKey                string `gorm:"column:tls_key"`
	TLSSkipVerify         bool   `gorm:"column:tls_skip_verify"`
	AgentToken            string
	AgentTokenHash        string
	AgentLastSeen         dbTime
	AgentID               string `gorm:"column:agent_id"`
	AgentName             string
	AgentVersion          string
	AgentCapabilities     string
	Icon                  string
	Labels                string
	CollectActivity       bool
	CollectMetrics        bool
	HighlightChanges      bool
	PublicIP              *string `gorm:"column:public_ip"`
	UpdateCheckEnabled    bool
	UpdateCheckAutoUpdate bool
	ImagePruneEnabled     bool
	Timezone              *string
	CreatedAt             dbTime
	UpdatedAt             dbTime
}

func (environmentRow) TableName() string { return "environments" }

// bootstrapSetting records that the first environment was created once, so
// that deleting it does not bring it back at the next start.
const bootstrapSetting = "bootstrap.local_environment"

// ListEnvironments returns every environment ordered by id.
func (s *Store) ListEnvironments(ctx context.Context) ([]Environment, error) {
	var rows []environmentRow
	if err := s.db.WithContext(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list environments: %w", err)
	}
	envs := make([]Environment, 0, len(rows))
	for _, r := range rows {
		e, err := s.environment(r)
		if err != nil {
			return nil, fmt.Errorf("store: list environments: %w", err)
		}
		envs = append(envs, e)
	}
	return envs, nil
}

// GetEnvironment returns the environment with the given id, or ErrNotFound.
func (s *Store) GetEnvironment(ctx context.Context, id int64) (Environment, error) {
	e, err := s.getEnvironment(ctx, s.db.Where("id = ?", id))
	if err != nil {
		return Environment{}, fmt.Errorf("store: get environment %d: %w", id, err)
	}
	return e, nil
}

// GetEnvironmentByName returns the environment with the given name, or ErrNotFound.
func (s *Store) GetEnvironmentByName(ctx context.Context, name string) (Environment, error) {
	e, err := s.getEnvironment(ctx, s.db.Where("name = ?", name))
	if err != nil {
		return Environment{}, fmt.Errorf("store: get environment %q: %w", name, err)
	}
	return e, nil
}

// getEnvironment reads the one environment q selects.
func (s *Store) getEnvironment(ctx context.Context, q *gorm.DB) (Environment, error) {
	var r environmentRow
	if err := q.WithContext(ctx).Take(&r).Error; err != nil {
		return Environment{}, translate(err)
	}
	return s.environment(r)
}

// CreateEnvironment inserts e and sets its ID, CreatedAt and UpdatedAt.
// A duplicate name is ErrConflict.
func (s *Store) CreateEnvironment(ctx context.Context, e *Environment) error {
	r, err := s.environmentRow(e)
	if err != nil {
		return fmt.Errorf("store: create environment %q: %w", e.Name, err)
	}
	t := now()
	r.ID, r.CreatedAt, r.UpdatedAt = 0, timeValue(t), timeValue(t)
	if err := s.db.WithContext(ctx).Create(&r).Error; err != nil {
		return fmt.Errorf("store: create environment %q: %w", e.Name, translate(err))
	}
	e.ID, e.CreatedAt, e.UpdatedAt = r.ID, t, t
	return nil
}

// FirstEnvironmentSettled reports whether CreateFirstEnvironment would do
// nothing: an environment exists, or the first one was created once.
func (s *Store) FirstEnvironmentSettled(ctx context.Context) (bool, error) {
	var n int64
	if err := s.db.WithContext(ctx).Model(&environmentRow{}).Limit(1).Count(&n).Error; err != nil {
		return false, fmt.Errorf("store: count environments: %w", err)
	}
	if n > 0 {
		return true, nil
	}
	switch _, err := getSetting(ctx, s.db, bootstrapSetting); {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotFound):
		return false, nil
	default:
		return false, fmt.Errorf("store: read setting: %w", err)
	}
}

// CreateFirstEnvironment inserts e with id 1, in one transaction, when there
// is no environment and none was ever bootstrapped; it then records the
// bootstrap so that it happens at most once. created is false when it did
// nothing.
func (s *Store) CreateFirstEnvironment(ctx context.Context, e *Environment) (created bool, err error) {
	r, err := s.environmentRow(e)
	if err != nil {
		return false, fmt.Errorf("store: create first environment: %w", err)
	}
	t := now()
	r.ID, r.CreatedAt, r.UpdatedAt = 1, timeValue(t), timeValue(t)
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if s.dialect == dialectPostgres {
			// Keep concurrent inserts (another replica bootstrapping, or a
			// CreateEnvironment) out until we commit. SQLite transactions
			// already hold the write lock (_txlock=immediate).
			if err := tx.Exec(`LOCK TABLE environments IN EXCLUSIVE MODE`).Error; err != nil {
				return err
			}
		}
		var n int64
		if err := tx.Model(&environmentRow{}).Limit(1).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		switch _, err := getSetting(ctx, tx, bootstrapSetting); {
		case err == nil:
			return nil
		case !errors.Is(err, ErrNotFound):
			return err
		}
		if err := tx.Create(&r).Error; err != nil {
			return translate(err)
		}
		if s.dialect == dialectPostgres {
			// An explicit id does not advance the identity sequence.
			err := tx.Exec(`SELECT setval(pg_get_serial_sequence('environments', 'id'), (SELECT MAX(id) FROM environments))`).Error
			if err != nil {
				return err
			}
		}
		if err := setSetting(ctx, tx, bootstrapSetting, "done"); err != nil {
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
// sets e.UpdatedAt (and e.CreatedAt from the row); with CollectMetrics off,
// the environment's metrics history goes. A missing environment is
// ErrNotFound; a name taken by another environment is ErrConflict.
func (s *Store) UpdateEnvironment(ctx context.Context, e *Environment) error {
	r, err := s.environmentRow(e)
	if err != nil {
		return fmt.Errorf("store: update environment %d: %w", e.ID, err)
	}
	t := now()
	var created dbTime
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := oneRow(tx.Model(&environmentRow{}).Where("id = ?", e.ID).Updates(map[string]any{
			"name": r.Name, "connection_type": r.ConnectionType, "host": r.Host, "port": r.Port,
			"protocol": r.Protocol, "socket_path": r.SocketPath, "tls_ca": r.TLSCA, "tls_cert": r.TLSCert,
			"tls_key": r.TLSKey, "tls_skip_verify": r.TLSSkipVerify, "agent_token": r.AgentToken,
			"agent_last_seen": r.AgentLastSeen, "agent_id": r.AgentID, "agent_name": r.AgentName,
			"agent_version": r.AgentVersion, "agent_capabilities": r.AgentCapabilities, "icon": r.Icon,
			"labels": r.Labels, "collect_activity": r.CollectActivity, "collect_metrics": r.CollectMetrics,
			"highlight_changes": r.HighlightChanges, "public_ip": r.PublicIP,
			"update_check_enabled": r.UpdateCheckEnabled, "update_check_auto_update": r.UpdateCheckAutoUpdate,
			"image_prune_enabled": r.ImagePruneEnabled, "timezone": r.Timezone, "updated_at": timeValue(t),
		}))
		if err != nil {
			return err
		}
		if !e.CollectMetrics {
			if err := deleteMetrics(ctx, tx, e.ID); err != nil {
				return err
			}
		}
		return createdAt(ctx, tx, "environments", e.ID, &created)
	})
	if err != nil {
		return fmt.Errorf("store: update environment %d: %w", e.ID, err)
	}
	e.CreatedAt, e.UpdatedAt = created.Time, t
	return nil
}

// DeleteEnvironment deletes the environment with the given id, and with it
// its auto-update configurations, the role assignments scoped to it, its
// disk warning and its metrics history. A missing environment is ErrNotFound.
func (s *Store) DeleteEnvironment(ctx context.Context, id int64) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := oneRow(tx.Where("id = ?", id).Delete(&environmentRow{})); err != nil {
			return err
		}
		return translate(tx.Where(clause.IN{Column: clause.Column{Name: "key"}, Values: []any{diskWarningKey(id), remoteStacksDirKey(id)}}).
			Delete(&settingRow{}).Error)
	})
	if err != nil {
		return fmt.Errorf("store: delete environment %d: %w", id, err)
	}
	return nil
}

// environmentRow returns e as a row, the secrets sealed; the timestamps are
// the caller's to set.
func (s *Store) environmentRow(e *Environment) (environmentRow, error) {
	tlsKey, err := s.box.Encrypt(e.TLSKey)
	if err != nil {
		return environmentRow{}, fmt.Errorf("encrypt tls key: %w", err)
	}
	agentToken, err := s.box.Encrypt(e.AgentToken)
	if err != nil {
		return environmentRow{}, fmt.Errorf("encrypt agent token: %w", err)
	}
	capabilities, err := jsonList(e.AgentCapabilities)
	if err != nil {
		return environmentRow{}, fmt.Errorf("agent capabilities: %w", err)
	}
	labels, err := jsonList(e.Labels)
	if err != nil {
		return environmentRow{}, fmt.Errorf("labels: %w", err)
	}
	return environmentRow{
		ID: e.ID, Name: e.Name, ConnectionType: e.ConnectionType, Host: e.Host, Port: e.Port, Protocol: e.Protocol,
		SocketPath: e.SocketPath, TLSCA: e.TLSCA, TLSCert: e.TLSCert, TLSKey: tlsKey, TLSSkipVerify: e.TLSSkipVerify,
		AgentToken: agentToken, AgentTokenHash: e.AgentTokenHash, AgentLastSeen: nullTimeValue(e.AgentLastSeen), AgentID: e.AgentID, AgentName: e.AgentName,
		AgentVersion: e.AgentVersion, AgentCapabilities: capabilities, Icon: e.Icon, Labels: labels,
		CollectActivity: e.CollectActivity, CollectMetrics: e.CollectMetrics, HighlightChanges: e.HighlightChanges,
		PublicIP: e.PublicIP, UpdateCheckEnabled: e.UpdateCheckEnabled, UpdateCheckAutoUpdate: e.UpdateCheckAutoUpdate,
		ImagePruneEnabled: e.ImagePruneEnabled, Timezone: e.Timezone,
	}, nil
}

// environment returns the row as an Environment, the secrets opened.
func (s *Store) environment(r environmentRow) (Environment, error) {
	e := Environment{
		ID: r.ID, Name: r.Name, ConnectionType: r.ConnectionType, Host: r.Host, Port: r.Port, Protocol: r.Protocol,
		SocketPath: r.SocketPath, TLSCA: r.TLSCA, TLSCert: r.TLSCert, TLSSkipVerify: r.TLSSkipVerify,
		AgentTokenHash: r.AgentTokenHash, AgentLastSeen: r.AgentLastSeen.ptr(), AgentID: r.AgentID, AgentName: r.AgentName, AgentVersion: r.AgentVersion,
		Icon: r.Icon, CollectActivity: r.CollectActivity, CollectMetrics: r.CollectMetrics,
		HighlightChanges: r.HighlightChanges, PublicIP: r.PublicIP, UpdateCheckEnabled: r.UpdateCheckEnabled,
		UpdateCheckAutoUpdate: r.UpdateCheckAutoUpdate, ImagePruneEnabled: r.ImagePruneEnabled, Timezone: r.Timezone,
		CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time,
	}
	var err error
	if e.TLSKey, err = s.box.Decrypt(r.TLSKey); err != nil {
		return Environment{}, fmt.Errorf("environment %d: tls key: %w", r.ID, err)
	}
	if e.AgentToken, err = s.box.Decrypt(r.AgentToken); err != nil {
		return Environment{}, fmt.Errorf("environment %d: agent token: %w", r.ID, err)
	}
	if e.AgentCapabilities, err = parseList(r.AgentCapabilities); err != nil {
		return Environment{}, fmt.Errorf("environment %d: agent capabilities: %w", r.ID, err)
	}
	if e.Labels, err = parseList(r.Labels); err != nil {
		return Environment{}, fmt.Errorf("environment %d: labels: %w", r.ID, err)
	}
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
