package store

import (
	"context"
	"fmt"
	"time"
)

// Label is a defined environment label: a name environments carry in their
// labels list, and the colour the console shows it in.
type Label struct {
	ID        int64
	Name      string
	Color     string
	CreatedAt time.Time
}

type labelRow struct {
	ID        int64
	Name      string
	Color     string
	CreatedAt dbTime
}

func (labelRow) TableName() string { return "labels" }

// ListLabels returns every defined label ordered by name.
func (s *Store) ListLabels(ctx context.Context) ([]Label, error) {
	var rows []labelRow
	if err := s.db.WithContext(ctx).Order("name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list labels: %w", err)
	}
	out := make([]Label, 0, len(rows))
	for _, r := range rows {
		out = append(out, Label{ID: r.ID, Name: r.Name, Color: r.Color, CreatedAt: r.CreatedAt.Time})
	}
	return out, nil
}

// CreateLabel inserts l (ErrConflict on a taken name).
func (s *Store) CreateLabel(ctx context.Context, l *Label) error {
	t := now()
	row := labelRow{Name: l.Name, Color: l.Color, CreatedAt: timeValue(t)}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("store: create label %q: %w", l.Name, translate(err))
	}
	l.ID, l.CreatedAt = row.ID, t
	return nil
}
