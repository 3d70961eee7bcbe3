package store_test

import (
	"errors"
	"testing"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func TestSettingsUpsert(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		steps := []struct {
			key, value string
		}{
			{"ui.theme", "dark"},
			{"ui.language", "en"},
			{"ui.theme", "light"},
			{"ui.language", ""},
		}
		want := map[string]string{}
		for _, st := range steps {
			if err := s.SetSetting(ctx, st.key, st.value); err != nil {
				t.Fatalf("SetSetting(%q, %q): %v", st.key, st.value, err)
			}
			want[st.key] = st.value
			for key, value := range want {
				got, err := s.GetSetting(ctx, key)
				if err != nil || got != value {
					t.Errorf("after SetSetting(%q, %q): GetSetting(%q) = %q, %v; want %q", st.key, st.value, key, got, err, value)
				}
			}
		}
	})
}

func TestGetMissingSettingIsNotFound(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		if _, err := s.GetSetting(t.Context(), "no.such.key"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("GetSetting of a missing key: err = %v, want ErrNotFound", err)
		}
	})
}
