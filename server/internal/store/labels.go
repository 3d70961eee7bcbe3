package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
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

// SetLabelColor defines label name with color, or changes the colour of a
// defined one ("" clears it).
func (s *Store) SetLabelColor(ctx context.Context, name, color string) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&labelRow{}).Where("name = ?", name).Update("color", color)
		if res.Error != nil || res.RowsAffected > 0 {
			return res.Error
		}
		return tx.Create(&labelRow{Name: name, Color: color, CreatedAt: timeValue(now())}).Error
	})
	if err != nil {
		return fmt.Errorf("store: set label %q color: %w", name, translate(err))
	}
	return nil
}

// Relabel rewrites the labels of every environment (in one transaction):
// change returns an environment's new labels and whether they changed, or
// an error that undoes everything. Then
// it renames the defined label from to "to" (or deletes it when to is "";
// the row of "to" wins when both exist, keeping its colour unless it has
// none). from "" leaves the defined labels alone. It returns how many
// environments changed.
func (s *Store) Relabel(ctx context.Context, from, to string, change func(id int64, labels []string) ([]string, bool, error)) (int, error) {
	affected := 0
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var rows []environmentRow
		if err := tx.Select("id", "labels").Order("id").Find(&rows).Error; err != nil {
			return err
		}
		for _, r := range rows {
			labels, err := parseList(r.Labels)
			if err != nil {
				return fmt.Errorf("environment %d: labels: %w", r.ID, err)
			}
			next, changed, err := change(r.ID, labels)
			if err != nil {
				return err
			}
			if !changed {
				continue
			}
			text, err := jsonList(next)
			if err != nil {
				return err
			}
			if err := tx.Model(&environmentRow{}).Where("id = ?", r.ID).
				Updates(map[string]any{"labels": text, "updated_at": timeValue(now())}).Error; err != nil {
				return err
			}
			affected++
		}
		if from == "" {
			return nil
		}
		var old labelRow
		err := tx.Where("name = ?", from).Take(&old).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if to == "" {
			return tx.Delete(&labelRow{}, old.ID).Error
		}
		var target labelRow
		err = tx.Where("name = ?", to).Take(&target).Error
		switch {
		case errors.Is(err, gorm.ErrRecordNotFound):
			return tx.Model(&labelRow{}).Where("id = ?", old.ID).Update("name", to).Error
		case err != nil:
			return err
		}
		if target.Color == "" && old.Color != "" {
			if err := tx.Model(&labelRow{}).Where("id = ?", target.ID).Update("color", old.Color).Error; err != nil {
				return err
			}
		}
		return tx.Delete(&labelRow{}, old.ID).Error
	})
	if err != nil {
		return 0, fmt.Errorf("store: relabel %q: %w", from, translate(err))
	}
	return affected, nil
}
