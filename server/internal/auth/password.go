package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"

	"golang.org/x/crypto/argon2"
)

// MinPasswordLength is the shortest password Berth accepts.
const MinPasswordLength = 8

// Argon2Params are the argon2id cost parameters. They are recorded in every
// hash, so raising them later leaves existing hashes verifiable.
type Argon2Params struct {
	Memory  uint32 // KiB
	Time    uint32 // passes
	Threads uint8
	SaltLen uint32
	KeyLen  uint32
}

// DefaultArgon2 follows the RFC 9106 second recommendation (64 MiB, 3 passes).
var DefaultArgon2 = Argon2Params{Memory: 64 * 1024, Time: 3, Threads: 2, SaltLen: 16, KeyLen: 32}

var b64 = base64.RawStdEncoding

// gate bounds how many argon2 computations run at once. Each one allocates
// its memory parameter (64 MiB by default) and keeps a CPU busy, so without a
// bound a burst of sign-ins grows the process by 64 MiB per request.
type gate struct {
	slots chan struct{}

	running atomic.Int64 // computations running now
	peak    atomic.Int64 // the most that ran at once
}

func newGate(n int) *gate { return &gate{slots: make(chan struct{}, max(n, 1))} }

// argonGate admits as many argon2 computations as there are CPUs to run them.
var argonGate = newGate(runtime.GOMAXPROCS(0))

// do runs fn once a slot is free. A caller still waiting when ctx ends gives
// up with ctx's error, without running fn.
func (g *gate) do(ctx context.Context, fn func()) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-g.slots }()
	n := g.running.Add(1)
	defer g.running.Add(-1)
	for p := g.peak.Load(); n > p; p = g.peak.Load() {
		if g.peak.CompareAndSwap(p, n) {
			break
		}
	}
	fn()
	return nil
}

// collectAbove is the argon2 memory parameter (KiB) from which the memory
// of a computation is collected before its slot is handed on.
const collectAbove = 16 << 10

// idKey is argon2.IDKey, run through argonGate.
func idKey(ctx context.Context, password string, salt []byte, p Argon2Params) ([]byte, error) {
	var key []byte
	err := argonGate.do(ctx, func() {
		key = argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, p.KeyLen)
		if p.Memory >= collectAbove {
			// The blocks argon2 worked in (64 MiB by default) are garbage
			// now. Left to the collector's pace, a burst of sign-ins piles up
			// twice the memory of the computations running at once before
			// it runs; collected here, the next computation reuses the pages.
			// A collection costs a few milliseconds; the hash, far more.
			runtime.GC()
		}
	})
	return key, err
}

// HashPassword returns the PHC string of password:
// $argon2id$v=19$m=<KiB>,t=<passes>,p=<threads>$<salt>$<hash>. It waits for
// a free hashing slot (see argonGate) and gives up when ctx ends.
func HashPassword(ctx context.Context, password string, p Argon2Params) (string, error) {
	salt := make([]byte, p.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key, err := idKey(ctx, password, salt, p)
	if err != nil {
		return "", err
	}
	return phc(p, salt, key), nil
}

func phc(p Argon2Params, salt, key []byte) string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.Memory, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// decoyHash returns a PHC string with parameters p and a random salt and key,
// for verifying against when a user is unknown: verification costs exactly
// what it costs for a real hash with p, yet making one costs nothing (no
// password has this key, and the caller refuses the sign-in anyway).
func decoyHash(p Argon2Params) string {
	salt, key := make([]byte, p.SaltLen), make([]byte, p.KeyLen)
	_, _ = rand.Read(salt) // crypto/rand never fails on supported platforms
	_, _ = rand.Read(key)
	return phc(p, salt, key)
}

// ErrBadHash reports a stored hash that is not an argon2id PHC string.
var ErrBadHash = errors.New("auth: malformed password hash")

// VerifyPassword reports whether password matches the PHC string hash, using
// the parameters recorded in it. The comparison takes constant time. It
// waits for a free hashing slot (see argonGate) and gives up when ctx ends.
func VerifyPassword(ctx context.Context, password, hash string) (bool, error) {
	p, salt, key, err := parsePHC(hash)
	if err != nil {
		return false, err
	}
	got, err := idKey(ctx, password, salt, p)
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

// parsePHC splits a PHC string into its parameters, salt and key.
func parsePHC(hash string) (Argon2Params, []byte, []byte, error) {
	parts := strings.Split(hash, "$")
	// "", "argon2id", "v=19", "m=…,t=…,p=…", salt, key
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return Argon2Params{}, nil, nil, ErrBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return Argon2Params{}, nil, nil, ErrBadHash
	}
	var p Argon2Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return Argon2Params{}, nil, nil, ErrBadHash
	}
	// Refuse absurd costs from a tampered database rather than exhausting memory.
	if p.Memory < 8 || p.Memory > 4<<20 || p.Time < 1 || p.Time > 100 || p.Threads < 1 {
		return Argon2Params{}, nil, nil, ErrBadHash
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil || len(salt) < 8 {
		return Argon2Params{}, nil, nil, ErrBadHash
	}
	key, err := b64.DecodeString(parts[5])
	if err != nil || len(key) < 16 || len(key) > 128 {
		return Argon2Params{}, nil, nil, ErrBadHash
	}
	p.SaltLen, p.KeyLen = uint32(len(salt)), uint32(len(key))
	return p, salt, key, nil
}
