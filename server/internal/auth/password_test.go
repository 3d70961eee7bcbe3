package auth

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestHashPasswordRecordsDefaultParametersInPHCString(t *testing.T) {
	h, err := HashPassword(t.Context(), "correct horse battery staple", DefaultArgon2)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^\$argon2id\$v=19\$m=65536,t=3,p=2\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`)
	if !re.MatchString(h) {
		t.Errorf("HashPassword = %q, want a match of %s", h, re)
	}
	ok, err := VerifyPassword(t.Context(), "correct horse battery staple", h)
	if err != nil || !ok {
		t.Errorf("VerifyPassword(right password) = %v, %v; want true, nil", ok, err)
	}
}

func TestHashPasswordSaltsEveryHash(t *testing.T) {
	a, err := HashPassword(t.Context(), "same password", cheapArgon)
	if err != nil {
		t.Fatal(err)
	}
	b, err := HashPassword(t.Context(), "same password", cheapArgon)
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Errorf("two hashes of one password are equal: %q", a)
	}
	saltOf := func(h string) string { return strings.Split(h, "$")[4] }
	if saltOf(a) == saltOf(b) {
		t.Errorf("two hashes share the salt %q", saltOf(a))
	}
}

func TestVerifyPassword(t *testing.T) {
	h, err := HashPassword(t.Context(), "s3cret-Pässword", cheapArgon)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		password string
		want     bool
	}{
		{"s3cret-Pässword", true},
		{"s3cret-Password", false},
		{"S3CRET-PÄSSWORD", false},
		{"s3cret-Pässword ", false},
		{"", false},
	}
	for _, tt := range tests {
		got, err := VerifyPassword(t.Context(), tt.password, h)
		if err != nil {
			t.Errorf("VerifyPassword(%q): %v", tt.password, err)
		}
		if got != tt.want {
			t.Errorf("VerifyPassword(%q) = %v, want %v", tt.password, got, tt.want)
		}
	}
}

func TestVerifyPasswordReadsParametersFromHash(t *testing.T) {
	// Made with other parameters than the service's (DefaultArgon2): they
	// are read from the hash, so raising the defaults keeps it verifiable.
	h, err := HashPassword(t.Context(), "old password", cheapArgon)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=1024,t=1,p=1$") {
		t.Fatalf("HashPassword(cheap) = %q, want the parameters m=1024,t=1,p=1 recorded", h)
	}
	if ok, err := VerifyPassword(t.Context(), "old password", h); err != nil || !ok {
		t.Errorf("VerifyPassword(right password) = %v, %v; want true, nil", ok, err)
	}
	if ok, err := VerifyPassword(t.Context(), "new password", h); err != nil || ok {
		t.Errorf("VerifyPassword(wrong password) = %v, %v; want false, nil", ok, err)
	}
}

// replacePart returns hash with its i-th $-separated part replaced by v.
func replacePart(hash string, i int, v string) string {
	parts := strings.Split(hash, "$")
	parts[i] = v
	return strings.Join(parts, "$")
}

func TestVerifyPasswordRejectsMalformedHash(t *testing.T) {
	valid, err := HashPassword(t.Context(), "password", cheapArgon)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(valid, "$")
	salt, key := parts[4], parts[5]
	tests := []struct {
		name string
		hash string
	}{
		{"empty", ""},
		{"not a PHC string", "password"},
		{"bcrypt", "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"},
		{"algorithm argon2i", replacePart(valid, 1, "argon2i")},
		{"algorithm argon2d", replacePart(valid, 1, "argon2d")},
		{"algorithm in capitals", replacePart(valid, 1, "ARGON2ID")},
		{"version 16", replacePart(valid, 2, "v=16")},
		{"version missing", replacePart(valid, 2, "")},
		{"version not a number", replacePart(valid, 2, "v=x")},
		{"absurd memory", replacePart(valid, 3, "m=99999999,t=1,p=1")},
		{"memory above 4 GiB", replacePart(valid, 3, "m=4194305,t=1,p=1")},
		{"memory below 8 KiB", replacePart(valid, 3, "m=7,t=1,p=1")},
		{"negative memory", replacePart(valid, 3, "m=-1024,t=1,p=1")},
		{"zero passes", replacePart(valid, 3, "m=1024,t=0,p=1")},
		{"absurd passes", replacePart(valid, 3, "m=1024,t=101,p=1")},
		{"zero threads", replacePart(valid, 3, "m=1024,t=1,p=0")},
		{"threads overflow", replacePart(valid, 3, "m=1024,t=1,p=256")},
		{"parameters missing", replacePart(valid, 3, "")},
		{"parameters reordered", replacePart(valid, 3, "t=1,m=1024,p=1")},
		{"parameter missing", replacePart(valid, 3, "m=1024,t=1")},
		{"salt bad base64", replacePart(valid, 4, "!!!!"+salt[4:])},
		{"salt padded base64", replacePart(valid, 4, salt+"==")},
		{"salt url base64", replacePart(valid, 4, "____"+salt[4:])},
		{"salt too short", replacePart(valid, 4, b64.EncodeToString(make([]byte, 7)))},
		{"salt empty", replacePart(valid, 4, "")},
		{"key bad base64", replacePart(valid, 5, "*"+key[1:])},
		{"key too short", replacePart(valid, 5, b64.EncodeToString(make([]byte, 15)))},
		{"key too long", replacePart(valid, 5, b64.EncodeToString(make([]byte, 129)))},
		{"key empty", replacePart(valid, 5, "")},
		{"key missing", strings.Join(parts[:5], "$")},
		{"salt and key missing", strings.Join(parts[:4], "$")},
		{"extra part", valid + "$" + key},
		{"text before the first $", "x" + valid},
		{"only separators", "$$$$$"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := VerifyPassword(t.Context(), "password", tt.hash)
			if !errors.Is(err, ErrBadHash) {
				t.Errorf("VerifyPassword(%q) error = %v, want ErrBadHash", tt.hash, err)
			}
			if ok {
				t.Errorf("VerifyPassword(%q) = true for a malformed hash", tt.hash)
			}
		})
	}
}

// FuzzVerifyPassword feeds VerifyPassword stored hashes as a tampered
// database could hold them: it must never panic, must fail only with
// ErrBadHash, and must accept a password only against an argon2id v19 PHC
// string.
func FuzzVerifyPassword(f *testing.F) {
	valid, err := HashPassword(f.Context(), "password", cheapArgon)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		valid,
		replacePart(valid, 1, "argon2i"),
		replacePart(valid, 2, "v=16"),
		replacePart(valid, 3, "m=99999999,t=1,p=1"),
		replacePart(valid, 3, "m=8,t=1,p=255"),
		replacePart(valid, 4, "AAAA"),
		replacePart(valid, 5, "!!"),
		valid + "$",
		"",
		"$",
		"$argon2id$v=19$m=8,t=1,p=1$$",
	} {
		f.Add(seed)
	}
	shape := regexp.MustCompile(`^\$argon2id\$v=[^$]*\$m=[^$]*\$[^$]+\$[^$]+$`)
	f.Fuzz(func(t *testing.T, hash string) {
		// parsePHC bounds the cost (up to 4 GiB and 100 passes), which is
		// still too much to pay per fuzz input: check those without hashing.
		if p, _, _, err := parsePHC(hash); err == nil && (p.Memory > 64*1024 || p.Time > 3) {
			return
		}
		ok, err := VerifyPassword(t.Context(), "password", hash)
		if err != nil {
			if !errors.Is(err, ErrBadHash) {
				t.Fatalf("VerifyPassword(%q) error = %v, want ErrBadHash", hash, err)
			}
			if ok {
				t.Fatalf("VerifyPassword(%q) = true with error %v", hash, err)
			}
			return
		}
		if ok && !shape.MatchString(hash) {
			t.Fatalf("VerifyPassword accepted %q, which is not an argon2id PHC string", hash)
		}
	})
}
