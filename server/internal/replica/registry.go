// Package replica is what one Berth replica of a multi-replica install
// (several Berth servers on one PostgreSQL database, docs/scale.md) knows of
// the others: its own identity and liveness row (Registry), where another
// replica is reached, and the secret they share to call each other.
package replica

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
)

// Liveness: a replica renews its row every RenewEvery with an expiry TTL
// ahead; a replica whose row expired is gone (it stopped without saying so,
// or lost the database), and what it held may be taken over.
const (
	RenewEvery = 2 * time.Second
	TTL        = 6 * time.Second
	// sweepAfter: rows expired for longer than this are deleted (with their
	// leases) by whichever live replica renews next.
	sweepAfter = time.Minute
)

// tokenLabel is what the relay token is derived for (versioned: a new
// derivation is a new label).
const tokenLabel = "berth/replica-relay/v1"

// Config is where the other replicas reach this one.
type Config struct {
	// HTTPURL is this replica's API (http://REPLICA_HOST:PORT).
	HTTPURL string
	// RelayAddr is this replica's relay, on the agent port (REPLICA_HOST:AGENT_PORT).
	RelayAddr string
}

// Registry is this replica's identity and liveness row, and the others'
// liveness as the database tells it.
type Registry struct {
	store   *store.Store
	cfg     Config
	log     *slog.Logger
	id      string
	token   string
	started time.Time
	now     func() time.Time
	renewed atomic.Int64 // Unix nanoseconds of the last successful renewal (local clock)
}

// New returns the registry of a replica that just started: a random id of
// its own, and the relay token derived from the encryption key every
// replica shares (ENCRYPTION_KEY).
func New(st *store.Store, cfg Config, key []byte, log *slog.Logger) (*Registry, error) {
	if len(key) == 0 {
		return nil, errors.New("replica: the encryption key is required")
	}
	id, err := newID()
	if err != nil {
		return nil, err
	}
	return &Registry{store: st, cfg: cfg, log: log, id: id, token: DeriveToken(key), started: time.Now(), now: time.Now}, nil
}

// DeriveToken is the relay token of the replicas whose encryption key is key:
// hex(HMAC-SHA256(key, "berth/replica-relay/v1")).
func DeriveToken(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(tokenLabel))
	return hex.EncodeToString(m.Sum(nil))
}

// newID is a random UUID (version 4).
func newID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("replica: id: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]), nil
}

// Self is this replica's id.
func (r *Registry) Self() string { return r.id }

// Token is the secret every replica's internal call carries (relay
// streams, forwarded requests).
func (r *Registry) Token() string { return r.token }

// ValidToken reports, in constant time, whether tok is the replicas' token.
func (r *Registry) ValidToken(tok string) bool {
	return tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(r.token)) == 1
}

// Config is where the other replicas reach this one.
func (r *Registry) Config() Config { return r.cfg }

// Now is the registry's clock (the one liveness is judged by).
func (r *Registry) Now() time.Time { return r.now() }

// Renew writes this replica's row once: live for TTL from now.
func (r *Registry) Renew(ctx context.Context) error {
	now := r.now()
	err := r.store.RenewReplica(ctx, store.Replica{ID: r.id, HTTPURL: r.cfg.HTTPURL, RelayAddr: r.cfg.RelayAddr,
		StartedAt: r.started, RenewedAt: now, ExpiresAt: now.Add(TTL)})
	if err == nil {
		r.renewed.Store(now.UnixNano())
	}
	return err
}

// Healthy reports whether this replica's row is live as far as it knows:
// renewed within TTL. A replica that cannot renew it is taken for dead by
// the others (they take its agents over), so it lets its agents go.
func (r *Registry) Healthy() bool {
	last := r.renewed.Load()
	return last != 0 && r.now().Sub(time.Unix(0, last)) < TTL
}

// Run renews this replica's row at once and then every RenewEvery until ctx
// ends, then deletes it with the leases this replica holds (a graceful stop:
// its agents are free to connect elsewhere at once). Call Renew first when
// the row must exist before Berth serves.
func (r *Registry) Run(ctx context.Context) {
	tick := time.NewTicker(RenewEvery)
	defer tick.Stop()
	failing := false
	for {
		err := r.Renew(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			r.log.Error("this replica's liveness row cannot be renewed: other replicas will take its agents over", "replica", r.id, "err", err)
			failing = true
		case err == nil && failing:
			r.log.Info("this replica's liveness row is renewed again", "replica", r.id)
			failing = false
		}
		if err == nil {
			if n, err := r.store.DeleteReplicasExpiredBefore(ctx, r.now().Add(-sweepAfter)); err != nil && ctx.Err() == nil {
				r.log.Warn("sweep expired replicas", "err", err)
			} else if n > 0 {
				r.log.Info("removed replicas that stopped without saying so", "count", n)
			}
		}
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := r.store.DeleteReplica(dctx, r.id); err != nil {
				r.log.Warn("remove this replica's row", "replica", r.id, "err", err)
			}
			return
		case <-tick.C:
		}
	}
}

// Live returns a replica's row and whether it is live (the row exists and
// has not expired).
func (r *Registry) Live(ctx context.Context, id string) (store.Replica, bool, error) {
	rep, err := r.store.Replica(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Replica{}, false, nil
	}
	if err != nil {
		return store.Replica{}, false, err
	}
	return rep, rep.Live(r.now()), nil
}

// HTTPURLOf is where a replica's API is reached, and whether the replica is
// live (Locator).
func (r *Registry) HTTPURLOf(ctx context.Context, id string) (string, bool, error) {
	rep, live, err := r.Live(ctx, id)
	return rep.HTTPURL, live, err
}
