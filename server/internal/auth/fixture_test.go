package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/clocktest"
	"github.com/berth-dev/berth/shared/fault"
)

// cheapArgon keeps hashing fast in tests; the parameters are recorded in
// each hash, so verification works the same.
var cheapArgon = Argon2Params{Memory: 1024, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

// newFakeClock returns a test clock at whole microseconds, so that
// PostgreSQL stores its times exactly.
func newFakeClock() *clocktest.Clock {
	return clocktest.New(time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC))
}

// editionStub is an Edition whose license can be switched in a test.
type editionStub struct{ enterprise bool }

func (e *editionStub) Enterprise() bool { return e.enterprise }

// fixture is a Service over a real store, with a fake clock and a
// community edition that a test may upgrade.
type fixture struct {
	svc     *Service
	store   *store.Store
	clock   *clocktest.Clock
	edition *editionStub
	dir     string
}

func newFixture(t *testing.T, st *store.Store) *fixture {
	t.Helper()
	f := &fixture{store: st, clock: newFakeClock(), edition: &editionStub{}, dir: t.TempDir()}
	f.svc = f.newService(t)
	return f
}

// newService returns another Service on the fixture's store, clock, edition
// and data directory (as after a restart), with options changed by opts.
func (f *fixture) newService(t *testing.T, opts ...func(*Options)) *Service {
	t.Helper()
	argon := cheapArgon
	o := Options{Store: f.store, Log: slog.New(slog.DiscardHandler), DataDir: f.dir,
		Edition: f.edition, Now: f.clock.Now, Argon2: &argon}
	for _, opt := range opts {
		opt(&o)
	}
	s, err := New(t.Context(), o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// user creates a local user with the password "<username>-password".
func (f *fixture) user(t *testing.T, username string, admin bool) store.User {
	t.Helper()
	u, err := f.svc.CreateUser(t.Context(), UserSpec{Username: username, Password: username + "-password", IsAdmin: admin})
	if err != nil {
		t.Fatalf("CreateUser(%q): %v", username, err)
	}
	return u
}

// login signs username in with their fixture password.
func (f *fixture) login(t *testing.T, username string) (Identity, Session) {
	t.Helper()
	ident, sess, err := f.svc.Login(t.Context(), LoginRequest{Username: username, Password: username + "-password", IP: "192.0.2.1"})
	if err != nil {
		t.Fatalf("Login(%q): %v", username, err)
	}
	return ident, sess
}

// environment creates an environment and returns its id.
func (f *fixture) environment(t *testing.T, name string) int64 {
	t.Helper()
	e := store.Environment{Name: name, ConnectionType: "socket", SocketPath: "/nonexistent.sock", Port: 2375,
		Protocol: "http", Icon: "globe", Labels: []string{}}
	if err := f.store.CreateEnvironment(t.Context(), &e); err != nil {
		t.Fatalf("CreateEnvironment(%q): %v", name, err)
	}
	return e.ID
}

// wantFault fails unless err is a fault of kind with message (any message
// when msg is "").
func wantFault(t *testing.T, err error, kind fault.Kind, msg string) {
	t.Helper()
	f, ok := fault.As(err)
	if !ok {
		t.Fatalf("err = %v, want a fault of kind %d %q", err, kind, msg)
	}
	if f.Kind != kind || (msg != "" && f.Message != msg) {
		t.Fatalf("fault = kind %d %q, want kind %d %q", f.Kind, f.Message, kind, msg)
	}
}

// roleID returns the id of the role named name.
func (f *fixture) roleID(t *testing.T, name string) int64 {
	t.Helper()
	r, err := f.store.GetRoleByName(t.Context(), name)
	if err != nil {
		t.Fatalf("GetRoleByName(%q): %v", name, err)
	}
	return r.ID
}

// countVerifications makes the fixture's Service count password-hash
// verifications in *n.
func (f *fixture) countVerifications(n *int) {
	f.svc.verify = func(ctx context.Context, password, hash string) (bool, error) {
		*n++
		return VerifyPassword(ctx, password, hash)
	}
}

// sha256Hex is how sessions and API tokens are stored.
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// wantNoCredentials fails unless err is ErrNoCredentials.
func wantNoCredentials(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrNoCredentials) {
		t.Fatalf("err = %v, want ErrNoCredentials", err)
	}
}
