package store

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
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
	Labels        []ConfigLabel
	Ports         []ConfigPort
	Volumes       []ConfigVolume
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

// ConfigLabel is one container label of a config set, in the order given.
type ConfigLabel struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ConfigPort is one published port of a config set, as the container
// create request carries it.
type ConfigPort struct {
	ContainerPort string `json:"containerPort"`
	HostPort      string `json:"hostPort"`
	HostIP        string `json:"hostIp,omitempty"`
	Protocol      string `json:"protocol"`
}

// ConfigVolume is one volume of a config set: a host path or a named
// volume mounted at ContainerPath with Mode (rw, ro, …).
type ConfigVolume struct {
	HostPath      string `json:"hostPath"`
	ContainerPath string `json:"containerPath"`
	Mode          string `json:"mode"`
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
	labels, ports, volumes := c.Labels, c.Ports, c.Volumes
	if labels == nil {
		labels = []ConfigLabel{}
	}
	if ports == nil {
		ports = []ConfigPort{}
	}
	if volumes == nil {
		volumes = []ConfigVolume{}
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

// configSet decodes r, opening secret values. Rows written before labels
// and volumes were lists of objects hold labels as an object and volumes as
// "source:target[:mode]" strings; both read as the lists.
func (s *Store) configSet(r configSetRow) (ConfigSet, error) {
	c := ConfigSet{ID: r.ID, Name: r.Name, Description: r.Description, NetworkMode: r.NetworkMode, RestartPolicy: r.RestartPolicy,
		CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time, EnvVars: []ConfigVar{}, Labels: []ConfigLabel{},
		Ports: []ConfigPort{}, Volumes: []ConfigVolume{}}
	var labels, volumes []byte
	for _, f := range []struct {
		src string
		dst any
	}{{r.EnvVars, &c.EnvVars}, {r.Labels, &labels}, {r.Ports, &c.Ports}, {r.Volumes, &volumes}} {
		if f.src == "" {
			continue
		}
		if b, ok := f.dst.(*[]byte); ok {
			*b = []byte(f.src)
			continue
		}
		if err := json.Unmarshal([]byte(f.src), f.dst); err != nil {
			return ConfigSet{}, fmt.Errorf("config set %d: %w", r.ID, err)
		}
	}
	var err error
	if c.Labels, err = decodeConfigLabels(labels); err != nil {
		return ConfigSet{}, fmt.Errorf("config set %d: labels: %w", r.ID, err)
	}
	if c.Volumes, err = decodeConfigVolumes(volumes); err != nil {
		return ConfigSet{}, fmt.Errorf("config set %d: volumes: %w", r.ID, err)
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

// decodeConfigLabels reads a list of {key, value}, or an object (sorted by
// key).
func decodeConfigLabels(b []byte) ([]ConfigLabel, error) {
	out := []ConfigLabel{}
	if len(b) == 0 || string(b) == "null" {
		return out, nil
	}
	if b[0] != '{' {
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, err
		}
		if out == nil {
			out = []ConfigLabel{}
		}
		return out, nil
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, ConfigLabel{Key: k, Value: m[k]})
	}
	return out, nil
}

// decodeConfigVolumes reads a list whose items are {hostPath,
// containerPath, mode} or "source:target[:mode]" strings.
func decodeConfigVolumes(b []byte) ([]ConfigVolume, error) {
	out := []ConfigVolume{}
	if len(b) == 0 || string(b) == "null" {
		return out, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, err
	}
	for _, raw := range items {
		var v ConfigVolume
		var text string
		if err := json.Unmarshal(raw, &text); err == nil {
			v = ParseConfigVolume(text)
		} else if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// ParseConfigVolume splits "source:target[:mode]" at its first two colons
// (the mode is "rw" when not given).
func ParseConfigVolume(text string) ConfigVolume {
	src, rest, _ := strings.Cut(text, ":")
	dst, mode, _ := strings.Cut(rest, ":")
	if mode == "" {
		mode = "rw"
	}
	return ConfigVolume{HostPath: src, ContainerPath: dst, Mode: mode}
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
