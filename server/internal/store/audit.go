package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
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
	Since         *time.Time // inclusive
	Until         *time.Time // exclusive
	Limit         int        // 0 (or less): 100; at most 1000
	Offset        int
}

// Page sizes of ListAudit.
const (
	defaultAuditLimit = 100
	maxAuditLimit     = 1000
)

// auditColumns is the column list scanAuditEntry reads, in its order.
const auditColumns = `id, created_at, user_id, username, environment_id, action,
	entity_type, entity_id, entity_name, description, details, ip`

// AddAudit appends e to the audit log and sets its ID, and its CreatedAt
// when zero.
func (s *Store) AddAudit(ctx context.Context, e *AuditEntry) error {
	created := e.CreatedAt
	if created.IsZero() {
		created = now()
	}
	var id int64
	err := s.db.QueryRowContext(ctx, s.rebind(`
		INSERT INTO audit_log (created_at, user_id, username, environment_id, action,
			entity_type, entity_id, entity_name, description, details, ip)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id`),
		s.timeArg(created), nullInt64(e.UserID), e.Username, nullInt64(e.EnvironmentID), e.Action,
		e.EntityType, e.EntityID, e.EntityName, e.Description, e.Details, e.IP).Scan(&id)
	if err != nil {
		return fmt.Errorf("store: add audit %q: %w", e.Action, translate(err))
	}
	e.ID, e.CreatedAt = id, created
	return nil
}

// ListAudit returns the page of entries f selects, newest first, and how many
// entries f selects in all, regardless of its Limit and Offset.
func (s *Store) ListAudit(ctx context.Context, f AuditFilter) (entries []AuditEntry, total int, err error) {
	where, args := s.auditWhere(f)
	if err := s.db.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*) FROM audit_log`+where), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: list audit: %w", err)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = defaultAuditLimit
	}
	limit = min(limit, maxAuditLimit)
	offset := max(f.Offset, 0)
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT `+auditColumns+` FROM audit_log`+where+`
		ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`), append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("store: list audit: %w", err)
	}
	defer rows.Close()
	entries = []AuditEntry{}
	for rows.Next() {
		e, err := scanAuditEntry(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("store: list audit: %w", err)
		}
		entries = append(entries, e)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: list audit: %w", err)
	}
	return entries, total, nil
}

// auditWhere returns the WHERE clause (with a leading space, or "") that
// selects what f selects, and its arguments.
func (s *Store) auditWhere(f AuditFilter) (string, []any) {
	var (
		conds []string
		args  []any
	)
	add := func(cond string, arg any) {
		conds = append(conds, cond)
		args = append(args, arg)
	}
	if f.UserID != nil {
		add(`user_id = ?`, *f.UserID)
	}
	if f.Username != "" {
		add(`username = ?`, f.Username)
	}
	if f.EnvironmentID != nil {
		add(`environment_id = ?`, *f.EnvironmentID)
	}
	if prefix, ok := strings.CutSuffix(f.Action, "*"); ok {
		// substr rather than LIKE: no wildcards to escape in the prefix, and
		// the same case sensitivity in both dialects.
		if prefix != "" {
			conds = append(conds, `substr(action, 1, ?) = ?`)
			args = append(args, utf8.RuneCountInString(prefix), prefix)
		}
	} else if f.Action != "" {
		add(`action = ?`, f.Action)
	}
	if f.EntityType != "" {
		add(`entity_type = ?`, f.EntityType)
	}
	if f.Since != nil {
		add(`created_at >= ?`, s.timeArg(*f.Since))
	}
	if f.Until != nil {
		add(`created_at < ?`, s.timeArg(*f.Until))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func scanAuditEntry(row rowScanner) (AuditEntry, error) {
	var (
		e             AuditEntry
		created       dbTime
		userID, envID sql.NullInt64
	)
	err := row.Scan(&e.ID, &created, &userID, &e.Username, &envID, &e.Action,
		&e.EntityType, &e.EntityID, &e.EntityName, &e.Description, &e.Details, &e.IP)
	if err != nil {
		return AuditEntry{}, err
	}
	if userID.Valid {
		e.UserID = &userID.Int64
	}
	if envID.Valid {
		e.EnvironmentID = &envID.Int64
	}
	e.CreatedAt = created.Time
	return e, nil
}
