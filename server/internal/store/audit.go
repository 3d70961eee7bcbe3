package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
)

// AuditEntry is one line of the audit log: who did what to which entity.
// UserID and EnvironmentID are not foreign keys: the log outlives both.
type AuditEntry struct {
	ID            int64
	CreatedAt     time.Time
	UserID        *int64
	Username      string
	EnvironmentID *int64
	Action        string // e.g. "login", "container.start", "user.create"
	EntityType    string // "container", "user", "role", "session", "image", …
	EntityID      string
	EntityName    string
	Description   string
	Details       string // JSON text or ""
	IP            string
}

// AuditFilter selects audit entries; zero fields select everything.
type AuditFilter struct {
	UserID        *int64
	Username      string // exact
	EnvironmentID *int64
	Action        string // exact, or a prefix when it ends with "*" ("container.*")
	EntityType    string
	// Usernames, Actions and EntityTypes select entries with any of the
	// values given (exact); with the single-valued fields, both must hold.
	Usernames   []string
	Actions     []string
	EntityTypes []string
	// EnvironmentIDs restricts the entries to these environments; nil
	// means any (and entries of none), an empty slice none.
	EnvironmentIDs []int64
	Since          *time.Time // inclusive
	Until          *time.Time // exclusive
	Limit          int        // 0 (or less): 100; at most 1000
	Offset         int
}

// Page sizes of ListAudit.
const (
	defaultAuditLimit = 100
	maxAuditLimit     = 1000
)

// auditRow is a row of the audit_log table.
type auditRow struct {
	ID            int64
	CreatedAt     dbTime
	UserID        *int64
	Username      string
	EnvironmentID *int64
	Action        string
	EntityType    string
	EntityID      string `gorm:"column:entity_id"`
	EntityName    string
	Description   string
	Details       string
	IP            string `gorm:"column:ip"`
}

func (auditRow) TableName() string { return "audit_log" }

func (r auditRow) entry() AuditEntry {
	return AuditEntry{
		ID: r.ID, CreatedAt: r.CreatedAt.Time, UserID: r.UserID, Username: r.Username, EnvironmentID: r.EnvironmentID,
		Action: r.Action, EntityType: r.EntityType, EntityID: r.EntityID, EntityName: r.EntityName,
		Description: r.Description, Details: r.Details, IP: r.IP,
	}
}

// AddAudit appends e to the audit log and sets its ID, and its CreatedAt
// when zero.
func (s *Store) AddAudit(ctx context.Context, e *AuditEntry) error {
	created := e.CreatedAt
	if created.IsZero() {
		created = now()
	}
	r := auditRow{
		CreatedAt: timeValue(created), UserID: e.UserID, Username: e.Username, EnvironmentID: e.EnvironmentID,
		Action: e.Action, EntityType: e.EntityType, EntityID: e.EntityID, EntityName: e.EntityName,
		Description: e.Description, Details: e.Details, IP: e.IP,
	}
	if err := s.db.WithContext(ctx).Create(&r).Error; err != nil {
		return fmt.Errorf("store: add audit %q: %w", e.Action, translate(err))
	}
	e.ID, e.CreatedAt = r.ID, created
	return nil
}

// ListAudit returns the page of entries f selects, newest first, and how many
// entries f selects in all, regardless of its Limit and Offset.
func (s *Store) ListAudit(ctx context.Context, f AuditFilter) (entries []AuditEntry, total int, err error) {
	var n int64
	if err := auditWhere(s.db.WithContext(ctx).Model(&auditRow{}), f).Count(&n).Error; err != nil {
		return nil, 0, fmt.Errorf("store: list audit: %w", err)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = defaultAuditLimit
	}
	limit = min(limit, maxAuditLimit)
	offset := max(f.Offset, 0)
	var rows []auditRow
	err = auditWhere(s.db.WithContext(ctx), f).Order("created_at DESC, id DESC").Limit(limit).Offset(offset).Find(&rows).Error
	if err != nil {
		return nil, 0, fmt.Errorf("store: list audit: %w", err)
	}
	entries = make([]AuditEntry, 0, len(rows))
	for _, r := range rows {
		entries = append(entries, r.entry())
	}
	return entries, int(n), nil
}

// auditWhere narrows q to the entries f selects.
func auditWhere(q *gorm.DB, f AuditFilter) *gorm.DB {
	if f.UserID != nil {
		q = q.Where("user_id = ?", *f.UserID)
	}
	if f.Username != "" {
		q = q.Where("username = ?", f.Username)
	}
	if f.EnvironmentID != nil {
		q = q.Where("environment_id = ?", *f.EnvironmentID)
	}
	if prefix, ok := strings.CutSuffix(f.Action, "*"); ok {
		// substr rather than LIKE: no wildcards to escape in the prefix, and
		// the same case sensitivity in both dialects.
		if prefix != "" {
			q = q.Where("substr(action, 1, ?) = ?", utf8.RuneCountInString(prefix), prefix)
		}
	} else if f.Action != "" {
		q = q.Where("action = ?", f.Action)
	}
	if f.EntityType != "" {
		q = q.Where("entity_type = ?", f.EntityType)
	}
	if len(f.Usernames) > 0 {
		q = q.Where("username IN ?", f.Usernames)
	}
	if len(f.Actions) > 0 {
		q = q.Where("action IN ?", f.Actions)
	}
	if len(f.EntityTypes) > 0 {
		q = q.Where("entity_type IN ?", f.EntityTypes)
	}
	if f.EnvironmentIDs != nil {
		if len(f.EnvironmentIDs) == 0 {
			return q.Where("1 = 0")
		}
		q = q.Where("environment_id IN ?", f.EnvironmentIDs)
	}
	if f.Since != nil {
		q = q.Where("created_at >= ?", timeValue(*f.Since))
	}
	if f.Until != nil {
		q = q.Where("created_at < ?", timeValue(*f.Until))
	}
	return q
}

// DeleteAuditBefore deletes the audit entries written before t (a retention
// an administrator chose) and returns how many.
func (s *Store) DeleteAuditBefore(ctx context.Context, t time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Where("created_at < ?", timeValue(t)).Delete(&auditRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("store: delete old audit entries: %w", res.Error)
	}
	return res.RowsAffected, nil
}
