package store_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func TestPicturesAreKeptReplacedAndGoWithTheirOwner(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := store.Environment{Name: "pictured", ConnectionType: "socket", Protocol: "http"}
		if err := s.CreateEnvironment(ctx, &env); err != nil {
			t.Fatal(err)
		}
		u := store.User{Username: "pictured", IsActive: true, AuthProvider: "local"}
		if err := s.CreateUser(ctx, &u); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetEnvironmentIcon(ctx, env.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("icon before any = %v, want ErrNotFound", err)
		}
		binary := []byte{0x89, 'P', 'N', 'G', 0, 0xff, 0x00, 0x10}
		for _, p := range []store.Picture{{ContentType: "image/png", Data: binary}, {ContentType: "image/svg+xml", Data: []byte("<svg/>")}} {
			if err := s.SetEnvironmentIcon(ctx, env.ID, p); err != nil {
				t.Fatal(err)
			}
			if err := s.SetUserAvatar(ctx, u.ID, p); err != nil {
				t.Fatal(err)
			}
			icon, err := s.GetEnvironmentIcon(ctx, env.ID)
			if err != nil || icon.ContentType != p.ContentType || !bytes.Equal(icon.Data, p.Data) || icon.UpdatedAt.IsZero() {
				t.Errorf("icon = %+v, %v; want %+v", icon, err, p)
			}
			av, err := s.GetUserAvatar(ctx, u.ID)
			if err != nil || av.ContentType != p.ContentType || !bytes.Equal(av.Data, p.Data) {
				t.Errorf("avatar = %+v, %v; want %+v", av, err, p)
			}
		}
		if err := s.SetEnvironmentIcon(ctx, env.ID+1000, store.Picture{ContentType: "image/png", Data: binary}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("icon of a missing environment = %v, want ErrNotFound", err)
		}
		if err := s.SetUserAvatar(ctx, u.ID+1000, store.Picture{ContentType: "image/png", Data: binary}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("avatar of a missing user = %v, want ErrNotFound", err)
		}
		if err := s.DeleteUser(ctx, u.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetUserAvatar(ctx, u.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("avatar of a deleted user = %v", err)
		}
		if deleted, err := s.DeleteEnvironmentIcon(ctx, env.ID); err != nil || !deleted {
			t.Errorf("delete icon = %v, %v", deleted, err)
		}
		if deleted, err := s.DeleteEnvironmentIcon(ctx, env.ID); err != nil || deleted {
			t.Errorf("second delete = %v, %v; want false", deleted, err)
		}
	})
}
