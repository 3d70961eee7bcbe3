package auth

import "testing"

func TestValidateRedirect(t *testing.T) {
	cases := map[string]bool{
		"https://berth.example.com/api/auth/oidc/callback":      true,
		"https://berth.example.com:8443/api/auth/oidc/callback": true,
		"http://127.0.0.1:39123/api/auth/oidc/callback":         true,
		"http://localhost/api/auth/oidc/callback":               true,
		"http://[::1]:3000/api/auth/oidc/callback":              true,
		"http://berth.example.com/api/auth/oidc/callback":       false, // http only on loopback
		"https://berth.example.com/api/auth/oidc/callback/":     false,
		"https://berth.example.com/callback":                    false,
		"https://berth.example.com/api/auth/oidc/callback?x=1":  false,
		"ftp://berth.example.com/api/auth/oidc/callback":        false,
		"/api/auth/oidc/callback":                               false,
		"":                                                      false,
	}
	for uri, ok := range cases {
		if err := validateRedirect(uri); (err == nil) != ok {
			t.Errorf("validateRedirect(%q) = %v, want ok=%v", uri, err, ok)
		}
	}
}

func TestSafeRedirectKeepsOnlyLocalPaths(t *testing.T) {
	cases := map[string]string{
		"": "/", "/containers": "/containers", "/a?b=c": "/a?b=c",
		"//evil.example/x": "/", "https://evil.example": "/", `/\evil.example`: "/", "containers": "/",
	}
	for in, want := range cases {
		if got := safeRedirect(in); got != want {
			t.Errorf("safeRedirect(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClaimHasAnyIsExactAndCaseSensitive(t *testing.T) {
	groups := []any{"berth-admins", "ops"}
	cases := []struct {
		claim  any
		values []string
		want   bool
	}{
		{groups, []string{"ops"}, true},
		{groups, []string{"x", " berth-admins "}, true},
		{groups, []string{"Ops"}, false},
		{groups, []string{"berth"}, false},
		{"admin", []string{"admin"}, true},
		{"admin", []string{"admin,x"}, false},
		{nil, []string{"ops"}, false},
		{[]any{1, true}, []string{"1"}, false},
		{groups, []string{""}, false},
	}
	for _, c := range cases {
		if got := claimHasAny(c.claim, c.values); got != c.want {
			t.Errorf("claimHasAny(%v, %q) = %v, want %v", c.claim, c.values, got, c.want)
		}
	}
}
