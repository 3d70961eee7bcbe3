package templates

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// LabelUse is a label with the environments carrying it. A label carried
// by environments but never defined has ID 0 and no colour.
type LabelUse struct {
	store.Label
	Count        int
	Environments []LabelEnvironment
}

// LabelEnvironment is an environment carrying a label.
type LabelEnvironment struct {
	ID   int64
	Name string
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
	carriers := map[string][]LabelEnvironment{}
	for _, e := range envs {
		for _, l := range e.Labels {
			carriers[l] = append(carriers[l], LabelEnvironment{ID: e.ID, Name: e.Name})
		}
	}
	use := func(l store.Label) LabelUse {
		on := carriers[l.Name]
		if on == nil {
			on = []LabelEnvironment{}
		}
		slices.SortFunc(on, func(a, b LabelEnvironment) int { return cmp.Compare(a.ID, b.ID) })
		return LabelUse{Label: l, Count: len(on), Environments: on}
	}
	out := make([]LabelUse, 0, len(defined)+len(carriers))
	for _, l := range defined {
		out = append(out, use(l))
		delete(carriers, l.Name)
	}
	for name := range carriers {
		out = append(out, use(store.Label{Name: name}))
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

// maxEnvironmentLabels is how many labels an environment may carry (as the
// environment form allows).
const maxEnvironmentLabels = 10

// LabelChange is one bulk operation on environment labels, as POST
// /api/labels reads it.
type LabelChange struct {
	Action         string  // add, rename, delete or set-color
	Label          string  // add, delete, set-color
	OldLabel       string  // rename
	NewLabel       string  // rename
	EnvironmentIDs []int64 // add
	Color          string  // set-color ("" clears the colour)
}

// checkLabelName trims name and checks it is a label environments can carry.
func checkLabelName(field, name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", fault.Invalidf("%s is required", field)
	case len(name) > 50:
		return "", fault.Invalidf("Label name must be at most 50 characters")
	}
	return name, nil
}

// ChangeLabels applies ch to every environment (and to the defined labels)
// in one transaction and returns how many environments changed.
func ChangeLabels(ctx context.Context, st *store.Store, ch LabelChange) (int, error) {
	switch ch.Action {
	case "add":
		label, err := checkLabelName("label", ch.Label)
		if err != nil {
			return 0, err
		}
		if len(ch.EnvironmentIDs) == 0 {
			return 0, fault.Invalidf("environmentIds array is required")
		}
		envs, err := st.ListEnvironments(ctx)
		if err != nil {
			return 0, err
		}
		want := map[int64]bool{}
		for _, id := range ch.EnvironmentIDs {
			if !slices.ContainsFunc(envs, func(e store.Environment) bool { return e.ID == id }) {
				return 0, fault.New(fault.NotFound, fmt.Sprintf("Environment %d not found", id))
			}
			want[id] = true
		}
		return st.Relabel(ctx, "", "", func(id int64, labels []string) ([]string, bool, error) {
			if !want[id] {
				return nil, false, nil
			}
			if slices.Contains(labels, label) {
				return nil, false, nil
			}
			if len(labels) >= maxEnvironmentLabels {
				return nil, false, fault.Invalidf("Environment %d already has %d labels, the most an environment can have", id, maxEnvironmentLabels)
			}
			return append(labels, label), true, nil
		})
	case "rename":
		if strings.TrimSpace(ch.OldLabel) == "" || strings.TrimSpace(ch.NewLabel) == "" {
			return 0, fault.Invalidf("oldLabel and newLabel are required")
		}
		to, err := checkLabelName("newLabel", ch.NewLabel)
		if err != nil {
			return 0, err
		}
		from := ch.OldLabel
		if from == to {
			return 0, nil
		}
		return st.Relabel(ctx, from, to, func(_ int64, labels []string) ([]string, bool, error) {
			i := slices.Index(labels, from)
			if i < 0 {
				return nil, false, nil
			}
			if slices.Contains(labels, to) {
				return slices.Delete(labels, i, i+1), true, nil
			}
			labels[i] = to
			return labels, true, nil
		})
	case "delete":
		if strings.TrimSpace(ch.Label) == "" {
			return 0, fault.Invalidf("label is required")
		}
		return st.Relabel(ctx, ch.Label, "", func(_ int64, labels []string) ([]string, bool, error) {
			i := slices.Index(labels, ch.Label)
			if i < 0 {
				return nil, false, nil
			}
			return slices.Delete(labels, i, i+1), true, nil
		})
	case "set-color":
		label, err := checkLabelName("label", ch.Label)
		if err != nil {
			return 0, err
		}
		color := strings.TrimSpace(ch.Color)
		if color != "" && !colorPattern.MatchString(color) {
			return 0, fault.Invalidf("Invalid color %q: use a hex colour such as #3b82f6", color)
		}
		return 0, st.SetLabelColor(ctx, label, color)
	}
	return 0, fault.Invalidf(`Invalid action. Use "rename", "delete", "add", or "set-color"`)
}
