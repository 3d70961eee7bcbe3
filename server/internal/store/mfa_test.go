package store_test

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func TestMFAEnrolmentEnablesOnlyTheEnrolmentThatWasRead(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "mfa-user")
		u.MFAEnabled = false
		if err := s.UpdateUser(ctx, &u); err != nil {
			t.Fatal(err)
		}
		m, err := s.GetMFA(ctx, u.ID)
		if err != nil || m.Enabled() || m.PendingSecret != "" {
			t.Fatalf("GetMFA before enrolment = %+v, %v; want the zero state", m, err)
		}
		if err := s.SetPendingMFA(ctx, u.ID, "FIRSTSECRET"); err != nil {
			t.Fatal(err)
		}
		first, err := s.GetMFA(ctx, u.ID)
		if err != nil || first.PendingSecret != "FIRSTSECRET" || first.Enabled() {
			t.Fatalf("after SetPendingMFA = %+v, %v", first, err)
		}
		// A second enrolment replaces the first: the first can no longer be confirmed.
		if err := s.SetPendingMFA(ctx, u.ID, "SECONDSECRET"); err != nil {
			t.Fatal(err)
		}
		if err := s.EnableMFA(ctx, first, 10, nil); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("EnableMFA of a replaced enrolment = %v, want ErrNotFound", err)
		}
		second, err := s.GetMFA(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		codes := []store.BackupCode{{Selector: "AB", Hash: "hash-ab"}, {Selector: "CD", Hash: "hash-cd"}}
		if err := s.EnableMFA(ctx, second, 42, codes); err != nil {
			t.Fatal(err)
		}
		if err := s.EnableMFA(ctx, second, 43, nil); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("EnableMFA twice = %v, want ErrNotFound", err)
		}
		on, err := s.GetMFA(ctx, u.ID)
		if err != nil || on.Secret != "SECONDSECRET" || on.PendingSecret != "" || on.LastStep != 42 || on.EnabledAt == nil {
			t.Fatalf("after EnableMFA = %+v, %v", on, err)
		}
		got, err := s.GetUser(ctx, u.ID)
		if err != nil || !got.MFAEnabled {
			t.Fatalf("user after EnableMFA = %+v, %v; want MFAEnabled", got, err)
		}
		if n, err := s.CountUnusedBackupCodes(ctx, u.ID); err != nil || n != 2 {
			t.Fatalf("CountUnusedBackupCodes = %d, %v; want 2", n, err)
		}
	})
}

func TestMFASecretsAreSealedAtRest(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "sealed")
		if err := s.SetPendingMFA(ctx, u.ID, "PLAINSECRETVALUE"); err != nil {
			t.Fatal(err)
		}
		m, _ := s.GetMFA(ctx, u.ID)
		if err := s.EnableMFA(ctx, m, 1, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.SetPendingMFA(ctx, u.ID, "PENDINGPLAINVALUE"); err != nil {
			t.Fatal(err)
		}
		var secret, pending string
		err := s.DB().QueryRowContext(ctx, "SELECT secret, pending_secret FROM user_mfa WHERE user_id = "+strconv.FormatInt(u.ID, 10)).
			Scan(&secret, &pending)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{secret, pending} {
			if !strings.HasPrefix(v, "enc:v1:") || strings.Contains(v, "PLAIN") {
				t.Errorf("stored secret %q is not sealed", v)
			}
		}
	})
}

func TestMFAStepIsAcceptedOnceAcrossConcurrentSignIns(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "replay")
		if err := s.SetPendingMFA(ctx, u.ID, "REPLAYSECRET"); err != nil {
			t.Fatal(err)
		}
		m, _ := s.GetMFA(ctx, u.ID)
		if err := s.EnableMFA(ctx, m, 100, nil); err != nil {
			t.Fatal(err)
		}
		m, _ = s.GetMFA(ctx, u.ID)
		if ok, err := s.UseMFAStep(ctx, m, 100); err != nil || ok {
			t.Fatalf("UseMFAStep of the enrolment's own step = %v, %v; want refused", ok, err)
		}
		if ok, err := s.UseMFAStep(ctx, m, 99); err != nil || ok {
			t.Fatalf("UseMFAStep of an earlier step = %v, %v; want refused", ok, err)
		}
		const n = 8
		var wg sync.WaitGroup
		wins := make(chan bool, n)
		for range n {
			wg.Go(func() {
				ok, err := s.UseMFAStep(ctx, m, 101)
				if err != nil {
					t.Error(err)
				}
				wins <- ok
			})
		}
		wg.Wait()
		close(wins)
		won := 0
		for ok := range wins {
			if ok {
				won++
			}
		}
		if won != 1 {
			t.Fatalf("%d concurrent uses of one step won, want exactly 1", won)
		}
		if err := s.DisableMFA(ctx, u.ID); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.UseMFAStep(ctx, m, 200); err != nil || ok {
			t.Fatalf("UseMFAStep after DisableMFA = %v, %v; want refused", ok, err)
		}
	})
}

func TestBackupCodeIsUsedOnceAndDisableForgetsEverything(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "backup")
		if err := s.SetPendingMFA(ctx, u.ID, "BACKUPSECRET"); err != nil {
			t.Fatal(err)
		}
		m, _ := s.GetMFA(ctx, u.ID)
		if err := s.EnableMFA(ctx, m, 1, []store.BackupCode{{Selector: "XY", Hash: "h1"}, {Selector: "ZW", Hash: "h2"}}); err != nil {
			t.Fatal(err)
		}
		list, err := s.UnusedBackupCodes(ctx, u.ID, "XY")
		if err != nil || len(list) != 1 || list[0].Hash != "h1" {
			t.Fatalf("UnusedBackupCodes(XY) = %+v, %v", list, err)
		}
		at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		if ok, err := s.UseBackupCode(ctx, list[0].ID, at); err != nil || !ok {
			t.Fatalf("first use = %v, %v; want accepted", ok, err)
		}
		if ok, err := s.UseBackupCode(ctx, list[0].ID, at); err != nil || ok {
			t.Fatalf("second use = %v, %v; want refused", ok, err)
		}
		if list, err := s.UnusedBackupCodes(ctx, u.ID, "XY"); err != nil || len(list) != 0 {
			t.Fatalf("UnusedBackupCodes(XY) after use = %+v, %v; want none", list, err)
		}
		if err := s.DisableMFA(ctx, u.ID); err != nil {
			t.Fatal(err)
		}
		off, err := s.GetMFA(ctx, u.ID)
		if err != nil || off.Enabled() || off.PendingSecret != "" {
			t.Fatalf("GetMFA after DisableMFA = %+v, %v", off, err)
		}
		if n, err := s.CountUnusedBackupCodes(ctx, u.ID); err != nil || n != 0 {
			t.Fatalf("backup codes after DisableMFA = %d, %v; want 0", n, err)
		}
		if got, _ := s.GetUser(ctx, u.ID); got.MFAEnabled {
			t.Fatal("user still MFAEnabled after DisableMFA")
		}
		if err := s.DisableMFA(ctx, 999999); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("DisableMFA of a missing user = %v, want ErrNotFound", err)
		}
		if err := s.SetPendingMFA(ctx, 999999, "X"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("SetPendingMFA of a missing user = %v, want ErrNotFound", err)
		}
	})
}

func TestDeletingAUserDeletesItsMFA(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "gone")
		if err := s.SetPendingMFA(ctx, u.ID, "GONESECRET"); err != nil {
			t.Fatal(err)
		}
		m, _ := s.GetMFA(ctx, u.ID)
		if err := s.EnableMFA(ctx, m, 1, []store.BackupCode{{Selector: "AA", Hash: "h"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteUser(ctx, u.ID); err != nil {
			t.Fatal(err)
		}
		var rows int
		err := s.DB().QueryRowContext(ctx, "SELECT (SELECT COUNT(*) FROM user_mfa) + (SELECT COUNT(*) FROM user_mfa_backup_codes)").
			Scan(&rows)
		if err != nil || rows != 0 {
			t.Fatalf("MFA rows left after deleting the user = %d, %v; want 0", rows, err)
		}
	})
}
