package store

import (
	"context"
	"fmt"
)

// AuditAfter returns, oldest first, up to limit entries written after the
// entry afterID (ids grow with every entry, on every server sharing the
// database) that f selects; f's Limit and Offset are ignored.
func (s *Store) AuditAfter(ctx context.Context, afterID int64, f AuditFilter, limit int) ([]AuditEntry, error) {
	var rows []auditRow
	err := auditWhere(s.db.WithContext(ctx), f).Where("id > ?", afterID).Order("id ASC").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: audit after %d: %w", afterID, err)
	}
	out := make([]AuditEntry, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.entry())
	}
	return out, nil
}

// LastAuditID returns the id of the newest audit entry (0: none).
func (s *Store) LastAuditID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.db.WithContext(ctx).Model(&auditRow{}).Select("COALESCE(MAX(id), 0)").Scan(&id).Error; err != nil {
		return 0, fmt.Errorf("store: last audit id: %w", err)
	}
	return id, nil
}

// AuditUsernames returns the distinct non-empty usernames of the audit log,
// sorted.
func (s *Store) AuditUsernames(ctx context.Context) ([]string, error) {
	names := []string{}
	err := s.db.WithContext(ctx).Model(&auditRow{}).Where("username <> ''").Distinct("username").
		Order("username").Pluck("username", &names).Error
	if err != nil {
		return nil, fmt.Errorf("store: audit usernames: %w", err)
	}
	return names, nil
}
