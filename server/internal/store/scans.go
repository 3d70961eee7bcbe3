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

// AddScanResult stores a result.
func (s *Store) AddScanResult(ctx context.Context, r *ScanRecord) error {
	err := s.db.QueryRowContext(ctx, s.rebind(`
		INSERT INTO scan_results (environment_id, image_id, image_name, scanner, scanned_at, result)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING id`),
		r.EnvironmentID, r.ImageID, r.ImageName, r.Scanner, s.timeArg(r.ScannedAt), r.Result).Scan(&r.ID)
	if err != nil {
		return fmt.Errorf("store: add scan result: %w", translate(err))
	}
	return nil
}

// LatestScanResult returns the newest result of image (an id or a name) on
// an environment, from scanner ("" for any), or ErrNotFound.
func (s *Store) LatestScanResult(ctx context.Context, envID int64, image, scanner string) (ScanRecord, error) {
	q := `SELECT id, environment_id, image_id, image_name, scanner, scanned_at, result FROM scan_results
		WHERE environment_id = ? AND (image_id = ? OR image_name = ?)`
	args := []any{envID, image, image}
	if scanner != "" {
		q += ` AND scanner = ?`
		args = append(args, scanner)
	}
	q += ` ORDER BY scanned_at DESC, id DESC LIMIT 1`
	var (
		r  ScanRecord
		at dbTime
	)
	err := s.db.QueryRowContext(ctx, s.rebind(q), args...).Scan(&r.ID, &r.EnvironmentID, &r.ImageID, &r.ImageName, &r.Scanner, &at, &r.Result)
	if err != nil {
		return ScanRecord{}, fmt.Errorf("store: latest scan of %s: %w", image, translate(err))
	}
	r.ScannedAt = at.Time
	return r, nil
}
