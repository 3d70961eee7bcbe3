package store

import (
	"context"
	"fmt"
	"time"
)

// TemplateSource is a list of app templates in Portainer's format, read
// from an http(s) URL or a local file, with the outcome of its last fetch.
type TemplateSource struct {
	ID            int64
	Name          string
	URL           string // http(s) URL, file:// URL or absolute path
	Enabled       bool
	LastError     string
	LastFetchedAt *time.Time
	TemplateCount int
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

type templateSourceRow struct {
	ID            int64
	Name          string
	URL           string `gorm:"column:url"`
	Enabled       bool
	LastError     string
	LastFetchedAt dbTime
	TemplateCount int
	CreatedAt     dbTime
	UpdatedAt     dbTime
}

func (templateSourceRow) TableName() string { return "template_sources" }

func (r templateSourceRow) source() TemplateSource {
	return TemplateSource{ID: r.ID, Name: r.Name, URL: r.URL, Enabled: r.Enabled, LastError: r.LastError,
		LastFetchedAt: timePtr(r.LastFetchedAt), TemplateCount: r.TemplateCount, CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time}
}

// ListTemplateSources returns every template source ordered by id.
func (s *Store) ListTemplateSources(ctx context.Context) ([]TemplateSource, error) {
	var rows []templateSourceRow
	if err := s.db.WithContext(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list template sources: %w", err)
	}
	out := make([]TemplateSource, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.source())
	}
	return out, nil
}

// GetTemplateSource returns a template source, or ErrNotFound.
func (s *Store) GetTemplateSource(ctx context.Context, id int64) (TemplateSource, error) {
	var r templateSourceRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return TemplateSource{}, fmt.Errorf("store: get template source %d: %w", id, translate(err))
	}
	return r.source(), nil
}

// CreateTemplateSource inserts src (ErrConflict on a taken name).
func (s *Store) CreateTemplateSource(ctx context.Context, src *TemplateSource) error {
	t := now()
	row := templateSourceRow{Name: src.Name, URL: src.URL, Enabled: src.Enabled, CreatedAt: timeValue(t), UpdatedAt: timeValue(t)}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("store: create template source %q: %w", src.Name, translate(err))
	}
	*src = row.source()
	return nil
}

// UpdateTemplateSource writes the name, URL and enabled flag of src by ID
// (ErrNotFound, ErrConflict); a changed URL forgets the last fetch.
func (s *Store) UpdateTemplateSource(ctx context.Context, src *TemplateSource) error {
	t := now()
	err := oneRow(s.db.WithContext(ctx).Model(&templateSourceRow{}).Where("id = ?", src.ID).Updates(map[string]any{
		"name": src.Name, "url": src.URL, "enabled": src.Enabled, "updated_at": timeValue(t),
	}))
	if err != nil {
		return fmt.Errorf("store: update template source %d: %w", src.ID, translate(err))
	}
	src.UpdatedAt = t
	return nil
}

// RecordTemplateFetch keeps the outcome of a source's fetch: the number of
// templates read, or the error (an empty fetchErr clears it).
func (s *Store) RecordTemplateFetch(ctx context.Context, id int64, at time.Time, count int, fetchErr string) error {
	err := s.db.WithContext(ctx).Model(&templateSourceRow{}).Where("id = ?", id).Updates(map[string]any{
		"last_error": fetchErr, "last_fetched_at": timeValue(at), "template_count": count,
	}).Error
	if err != nil {
		return fmt.Errorf("store: record fetch of template source %d: %w", id, err)
	}
	return nil
}

// DeleteTemplateSource deletes a template source, or answers ErrNotFound.
func (s *Store) DeleteTemplateSource(ctx context.Context, id int64) error {
	if err := oneRow(s.db.WithContext(ctx).Where("id = ?", id).Delete(&templateSourceRow{})); err != nil {
		return fmt.Errorf("store: delete template source %d: %w", id, err)
	}
	return nil
}
