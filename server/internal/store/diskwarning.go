package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// DiskWarning is an environment's disk space warning: when Enabled, a
// disk_space_warning is raised as the engine's data-root filesystem fills
// above ThresholdPercent (Mode "percentage"), or as the engine's images,
// containers, volumes and build cache take more than ThresholdGb GiB (Mode
// "absolute").
type DiskWarning struct {
	Enabled          bool    `json:"enabled"`
	Mode             string  `json:"mode"`
	ThresholdPercent int     `json:"thresholdPercent"`
	ThresholdGb      float64 `json:"thresholdGb"`
}

// The disk warning's modes.
const (
	DiskPercentage = "percentage"
	DiskAbsolute   = "absolute"
)

// DefaultDiskWarning is the setting of an environment that never set one.
var DefaultDiskWarning = DiskWarning{Enabled: false, Mode: DiskPercentage, ThresholdPercent: 90, ThresholdGb: 50}

// diskWarningKey is the settings key of environment envID's disk warning.
func diskWarningKey(envID int64) string { return fmt.Sprintf("environment.%d.disk_warning", envID) }

// GetDiskWarning returns the disk warning of environment envID (the default
// when it never set one).
func (s *Store) GetDiskWarning(ctx context.Context, envID int64) (DiskWarning, error) {
	v, err := s.GetSetting(ctx, diskWarningKey(envID))
	if errors.Is(err, ErrNotFound) {
		return DefaultDiskWarning, nil
	}
	if err != nil {
		return DiskWarning{}, err
	}
	dw := DefaultDiskWarning
	if err := json.Unmarshal([]byte(v), &dw); err != nil {
		return DiskWarning{}, fmt.Errorf("store: disk warning of environment %d: %w", envID, err)
	}
	return dw, nil
}

// SetDiskWarning stores the disk warning of environment envID.
func (s *Store) SetDiskWarning(ctx context.Context, envID int64, dw DiskWarning) error {
	b, err := json.Marshal(dw)
	if err != nil {
		return err
	}
	return s.SetSetting(ctx, diskWarningKey(envID), string(b))
}
