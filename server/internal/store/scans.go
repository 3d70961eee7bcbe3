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
