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

func TestTypedSettingsFallBackToTheirDefault(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		if n, err := s.IntSetting(ctx, "typed.n", 7); n != 7 || err != nil {
			t.Errorf("IntSetting unset = %d, %v; want the default 7", n, err)
		}
		if b, err := s.BoolSetting(ctx, "typed.b", true); !b || err != nil {
			t.Errorf("BoolSetting unset = %v, %v; want the default true", b, err)
		}
		for key, value := range map[string]string{"typed.n": "42", "typed.b": "false", "typed.bad": "x"} {
			if err := s.SetSetting(ctx, key, value); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := s.IntSetting(ctx, "typed.n", 7); n != 42 || err != nil {
			t.Errorf("IntSetting = %d, %v; want 42", n, err)
		}
		if b, err := s.BoolSetting(ctx, "typed.b", true); b || err != nil {
			t.Errorf("BoolSetting = %v, %v; want false", b, err)
		}
		if n, err := s.IntSetting(ctx, "typed.bad", 7); n != 7 || err != nil {
			t.Errorf("IntSetting of a non-number = %d, %v; want the default 7", n, err)
		}
		if b, err := s.BoolSetting(ctx, "typed.bad", true); !b || err != nil {
			t.Errorf("BoolSetting of a non-boolean = %v, %v; want the default true", b, err)
		}
	})
}
