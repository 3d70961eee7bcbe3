package templates

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// LabelUse is a label with the number of environments carrying it. A label
// carried by environments but never defined has ID 0 and no colour.
type LabelUse struct {
	store.Label
	Count int
}

// colorPattern is a CSS hex colour.
var colorPattern = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

// Labels returns the defined labels and those environments carry, with
// the number of environments carrying each, ordered by name.
func Labels(ctx context.Context, st *store.Store) ([]LabelUse, error) {
	defined, err := st.ListLabels(ctx)
	if err != nil {
		return nil, err
	}
	envs, err := st.ListEnvironments(ctx)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, e := range envs {
		for _, l := range e.Labels {
			counts[l]++
		}
	}
	out := make([]LabelUse, 0, len(defined)+len(counts))
	for _, l := range defined {
		out = append(out, LabelUse{Label: l, Count: counts[l.Name]})
		delete(counts, l.Name)
	}
	for name, n := range counts {
		out = append(out, LabelUse{Label: store.Label{Name: name}, Count: n})
	}
	slices.SortFunc(out, func(a, b LabelUse) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// CreateLabel defines a label with a colour.
func CreateLabel(ctx context.Context, st *store.Store, l *store.Label) error {
	l.Name, l.Color = strings.TrimSpace(l.Name), strings.TrimSpace(l.Color)
	switch {
	case l.Name == "":
		return fault.Invalidf("Label name is required")
	case len(l.Name) > 50:
		return fault.Invalidf("Label name must be at most 50 characters")
	case l.Color != "" && !colorPattern.MatchString(l.Color):
		return fault.Invalidf("Invalid color %q: use a hex colour such as #3b82f6", l.Color)
	}
	if err := st.CreateLabel(ctx, l); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return fault.New(fault.Conflict, fmt.Sprintf("Label '%s' already exists", l.Name))
		}
		return err
	}
	return nil
}
