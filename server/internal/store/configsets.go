package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// ConfigSet is a named, reusable set of container settings that the
// container create form applies. Secret variable values are plaintext in
// memory and sealed at rest.
type ConfigSet struct {
	ID            int64
	Name          string
	Description   string
	EnvVars       []ConfigVar
	Labels        map[string]string
	Ports         []ConfigPort
	Volumes       []string // "source:target[:mode]"
	NetworkMode   string
	RestartPolicy string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// ConfigVar is one environment variable of a config set.
type ConfigVar struct {
	Key      string `json:"key"`
	Value    string `json:"value"`
	IsSecret bool   `json:"isSecret"`
}

// ConfigPort is one published port of a config set, as the container
// create request carries it.
type ConfigPort struct {
	ContainerPort string `json:"containerPort"`
	HostPort      string `json:"hostPort,omitempty"`
	HostIP        string `json:"hostIp,omitempty"`
	Protocol      string `json:"protocol,omitempty"`
}

type configSetRow struct {
	ID            int64
	Name          string
	Description   string
	EnvVars       string
	Labels        string
	Ports         string
	Volumes       string
	NetworkMode   string
	RestartPolicy string
	CreatedAt     dbTime
	UpdatedAt     dbTime
}

func (configSetRow) TableName() string { return "config_sets" }

// configSetRow encodes c, sealing secret values.
func (s *Store) configSetRow(c *ConfigSet) (configSetRow, error) {
	vars := make([]ConfigVar, 0, len(c.EnvVars))
	for _, v := range c.EnvVars {
		if v.IsSecret {
			sealed, err := s.box.Encrypt(v.Value)
			if err != nil {
				return configSetRow{}, err
			}
			v.Value = sealed
		}
		vars = append(vars, v)
	}
	labels := c.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	ports, volumes := c.Ports, c.Volumes
	if ports == nil {
		ports = []ConfigPort{}
	}
	if volumes == nil {
		volumes = []string{}
	}
	row := configSetRow{ID: c.ID, Name: c.Name, Description: c.Description, NetworkMode: c.NetworkMode, RestartPolicy: c.RestartPolicy}
	for _, f := range []struct {
		dst *string
		v   any
	}{{&row.EnvVars, vars}, {&row.Labels, labels}, {&row.Ports, ports}, {&row.Volumes, volumes}} {
		b, err := json.Marshal(f.v)
		if err != nil {
			return configSetRow{}, err
		}
		*f.dst = string(b)
	}
	return row, nil
}

// configSet decodes r, opening secret values.
func (s *Store) configSet(r configSetRow) (ConfigSet, error) {
	c := ConfigSet{ID: r.ID, Name: r.Name, Description: r.Description, NetworkMode: r.NetworkMode, RestartPolicy: r.RestartPolicy,
		CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time, EnvVars: []ConfigVar{}, Labels: map[string]string{},
		Ports: []ConfigPort{}, Volumes: []string{}}
	for _, f := range []struct {
		src string
		dst any
	}{{r.EnvVars, &c.EnvVars}, {r.Labels, &c.Labels}, {r.Ports, &c.Ports}, {r.Volumes, &c.Volumes}} {
		if f.src == "" {
			continue
		}
		if err := json.Unmarshal([]byte(f.src), f.dst); err != nil {
			return ConfigSet{}, fmt.Errorf("config set %d: %w", r.ID, err)
		}
	}
	for i, v := range c.EnvVars {
		if v.IsSecret {
			plain, err := s.box.Decrypt(v.Value)
			if err != nil {
				return ConfigSet{}, fmt.Errorf("config set %d: variable %s: %w", r.ID, v.Key, err)
			}
			c.EnvVars[i].Value = plain
		}
	}
	return c, nil
}

// ListConfigSets returns every config set ordered by name.
func (s *Store) ListConfigSets(ctx context.Context) ([]ConfigSet, error) {
	var rows []configSetRow
	if err := s.db.WithContext(ctx).Order("name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list config sets: %w", err)
	}
	out := make([]ConfigSet, 0, len(rows))
	for _, r := range rows {
		c, err := s.configSet(r)
		if err != nil {
			return nil, fmt.Errorf("store: list config sets: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// GetConfigSet returns a config set, or ErrNotFound.
func (s *Store) GetConfigSet(ctx context.Context, id int64) (ConfigSet, error) {
	var r configSetRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return ConfigSet{}, fmt.Errorf("store: get config set %d: %w", id, translate(err))
	}
	c, err := s.configSet(r)
	if err != nil {
		return ConfigSet{}, fmt.Errorf("store: get config set %d: %w", id, err)
	}
	return c, nil
}

// CreateConfigSet inserts c (ErrConflict on a taken name).
func (s *Store) CreateConfigSet(ctx context.Context, c *ConfigSet) error {
	row, err := s.configSetRow(c)
	if err != nil {
		return fmt.Errorf("store: create config set: %w", err)
	}
	t := now()
	row.ID, row.CreatedAt, row.UpdatedAt = 0, timeValue(t), timeValue(t)
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("store: create config set %q: %w", c.Name, translate(err))
	}
	c.ID, c.CreatedAt, c.UpdatedAt = row.ID, t, t
	return nil
}

// UpdateConfigSet writes every field of c by ID (ErrNotFound, ErrConflict).
func (s *Store) UpdateConfigSet(ctx context.Context, c *ConfigSet) error {
	row, err := s.configSetRow(c)
	if err != nil {
		return fmt.Errorf("store: update config set: %w", err)
	}
	t := now()
	err = oneRow(s.db.WithContext(ctx).Model(&configSetRow{}).Where("id = ?", c.ID).Updates(map[string]any{
		"name": row.Name, "description": row.Description, "env_vars": row.EnvVars, "labels": row.Labels,
		"ports": row.Ports, "volumes": row.Volumes, "network_mode": row.NetworkMode, "restart_policy": row.RestartPolicy,
		"updated_at": timeValue(t),
	}))
	if err != nil {
		return fmt.Errorf("store: update config set %d: %w", c.ID, translate(err))
	}
	c.UpdatedAt = t
	return nil
}

// DeleteConfigSet deletes a config set, or answers ErrNotFound.
func (s *Store) DeleteConfigSet(ctx context.Context, id int64) error {
	if err := oneRow(s.db.WithContext(ctx).Where("id = ?", id).Delete(&configSetRow{})); err != nil {
		return fmt.Errorf("store: delete config set %d: %w", id, err)
	}
	return nil
}
