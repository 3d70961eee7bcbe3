package store

import (
	"context"
	"fmt"
	"time"
)

// ScanRecord is a stored scan result; Result is the scanner-neutral JSON.
type ScanRecord struct {
	ID            int64
	EnvironmentID int64
	ImageID       string
	ImageName     string
	Scanner       string
	ScannedAt     time.Time
	Result        string
}

// scanResultRow is a row of the scan_results table.
type scanResultRow struct {
	ID            int64
	EnvironmentID int64
	ImageID       string `gorm:"column:image_id"`
	ImageName     string
	Scanner       string
	ScannedAt     dbTime
	Result        string
}

func (scanResultRow) TableName() string { return "scan_results" }

// AddScanResult stores a result.
func (s *Store) AddScanResult(ctx context.Context, r *ScanRecord) error {
	row := scanResultRow{EnvironmentID: r.EnvironmentID, ImageID: r.ImageID, ImageName: r.ImageName,
		Scanner: r.Scanner, ScannedAt: timeValue(r.ScannedAt), Result: r.Result}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("store: add scan result: %w", translate(err))
	}
	r.ID = row.ID
	return nil
}

// LatestScanResult returns the newest result of image (an id or a name) on
// an environment, from scanner ("" for any), or ErrNotFound.
func (s *Store) LatestScanResult(ctx context.Context, envID int64, image, scanner string) (ScanRecord, error) {
	q := s.db.WithContext(ctx).Where("environment_id = ? AND (image_id = ? OR image_name = ?)", envID, image, image)
	if scanner != "" {
		q = q.Where("scanner = ?", scanner)
	}
	var r scanResultRow
	if err := q.Order("scanned_at DESC, id DESC").Take(&r).Error; err != nil {
		return ScanRecord{}, fmt.Errorf("store: latest scan of %s: %w", image, translate(err))
	}
	return ScanRecord{ID: r.ID, EnvironmentID: r.EnvironmentID, ImageID: r.ImageID, ImageName: r.ImageName,
		Scanner: r.Scanner, ScannedAt: r.ScannedAt.Time, Result: r.Result}, nil
}

// LatestScanResults returns the newest result of each image and scanner on
// an environment (ordered by image id, then scanner).
func (s *Store) LatestScanResults(ctx context.Context, envID int64) ([]ScanRecord, error) {
	var rows []scanResultRow
	err := s.db.WithContext(ctx).Where("environment_id = ?", envID).
		Order("image_id, scanner, scanned_at DESC, id DESC").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: scan results of environment %d: %w", envID, translate(err))
	}
	var out []ScanRecord
	for i, r := range rows {
		if i > 0 && rows[i-1].ImageID == r.ImageID && rows[i-1].Scanner == r.Scanner {
			continue // an older result of the same image and scanner
		}
		out = append(out, ScanRecord{ID: r.ID, EnvironmentID: r.EnvironmentID, ImageID: r.ImageID, ImageName: r.ImageName,
			Scanner: r.Scanner, ScannedAt: r.ScannedAt.Time, Result: r.Result})
	}
	return out, nil
}
