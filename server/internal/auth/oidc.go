package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// OIDC flow limits of the spec.
const (
	oidcStateTTL   = 10 * time.Minute
	oidcHTTPWait   = 10 * time.Second
	oidcStateBytes = 32
	oidcNonceBytes = 16
	oidcPKCEBytes  = 32
	maxOIDCFlows   = 10000 // pending sign-ins kept at most (memory bound)
)

// CallbackPath is the path of the OIDC redirect URI.
const CallbackPath = "/api/auth/oidc/callback"

var (
	errDiscovery     = fault.New(fault.Internal, "Failed to fetch OIDC discovery document")
	errOIDCState     = fault.New(fault.Invalid, "Invalid or expired OIDC state")
	errOIDCNonce     = fault.New(fault.Unauthorized, "Invalid OIDC nonce")
	errUsernameClaim = fault.New(fault.Unauthorized, "Username claim not found in token")
	errOIDCNotFound  = fault.New(fault.NotFound, "OIDC provider not found")
	errOIDCDisabled  = fault.New(fault.Invalid, "OIDC provider is disabled")
	errOtherAccount  = fault.New(fault.Unauthorized, "An account with this username belongs to another sign-in method")
)

// oidcFlow is one pending sign-in, keyed by its state.
type oidcFlow struct {
	providerID int64
	nonce      string
	verifier   string
	redirectTo string
	expires    time.Time
}

// ValidateOIDC checks and completes a provider configuration with the spec's
// defaults.
func ValidateOIDC(p *store.OIDCProvider) error {
	p.Name = strings.TrimSpace(p.Name)
	if p.Name == "" {
		return fault.New(fault.Invalid, "Provider name is required")
	}
	if u, err := url.Parse(p.IssuerURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fault.New(fault.Invalid, "issuerUrl must be an http(s) URL")
	}
	if strings.TrimSpace(p.ClientID) == "" {
		return fault.New(fault.Invalid, "clientId is required")
	}
	if p.ClientSecret == "" {
		return fault.New(fault.Invalid, "clientSecret is required")
	}
	if err := validateRedirect(p.RedirectURI); err != nil {
		return err
	}
	defaults := []struct {
		field *string
		value string
	}{{&p.Scopes, "openid profile email"}, {&p.UsernameClaim, "preferred_username"}, {&p.EmailClaim, "email"},
		{&p.DisplayNameClaim, "name"}, {&p.RoleMappingsClaim, "groups"}}
	for _, d := range defaults {
		if strings.TrimSpace(*d.field) == "" {
			*d.field = d.value
		}
	}
	if !slices.Contains(strings.Fields(p.Scopes), "openid") {
		return fault.New(fault.Invalid, "scopes must include openid")
	}
	return nil
}

// validateRedirect requires https://<domain>/api/auth/oidc/callback; plain
// http is accepted for loopback hosts only (development and tests).
func validateRedirect(raw string) error {
	bad := fault.New(fault.Invalid, "redirectUri must be https://<domain>"+CallbackPath)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Path != CallbackPath || u.RawQuery != "" || u.Fragment != "" {
		return bad
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
	}
	return bad
}

// UseOutbound makes OIDC and LDAP requests follow the outbound policy in
// force (nil: outbound.Open). Call it before serving.
func (s *Service) UseOutbound(o *outbound.Settings) { s.outbound = o }

// StateTagSep separates an OIDC state's random part from its tag.
const StateTagSep = "."

// UseStateTag ends the state of every OIDC sign-in begun from now on with
// StateTagSep and tag: a replica's id, so that the provider's callback,
// whichever replica the load balancer gives it to, is forwarded to the one
// that holds the pending sign-in (StateTag). Call it before serving.
func (s *Service) UseStateTag(tag string) { s.stateTag = tag }

// StateTag is the tag of an OIDC state (UseStateTag), "" when it has none.
func StateTag(state string) string {
	i := strings.LastIndex(state, StateTagSep)
	if i < 0 {
		return ""
	}
	return state[i+len(StateTagSep):]
}

// outboundContext is ctx carrying the outbound policy in force and, for
// go-oidc and oauth2, an HTTP client that follows it (discovery, token,
// keys and userinfo requests alike).
func (s *Service) outboundContext(ctx context.Context) (context.Context, error) {
	ctx, err := s.outbound.Context(ctx)
	if err != nil {
		return ctx, err
	}
	return oidc.ClientContext(ctx, outbound.FromContext(ctx).Client()), nil
}

// discover fetches the provider's discovery document (ctx from
// outboundContext).
func (s *Service) discover(ctx context.Context, p store.OIDCProvider) (*oidc.Provider, error) {
	ctx, cancel := context.WithTimeout(ctx, oidcHTTPWait)
	defer cancel()
	prov, err := oidc.NewProvider(ctx, p.IssuerURL)
	if f, ok := outbound.Refused(err); ok {
		return nil, f
	}
	if err != nil {
		return nil, errDiscovery.WithDetails(err.Error())
	}
	return prov, nil
}

// OIDCEndpoints are what a provider's discovery document announces.
type OIDCEndpoints struct {
	Issuer        string
	Authorization string
	Token         string
	UserInfo      string
}

// TestOIDC fetches a provider's discovery document.
func (s *Service) TestOIDC(ctx context.Context, id int64) (OIDCEndpoints, error) {
	p, err := s.oidcProvider(ctx, id)
	if err != nil {
		return OIDCEndpoints{}, err
	}
	if ctx, err = s.outboundContext(ctx); err != nil {
		return OIDCEndpoints{}, err
	}
	prov, err := s.discover(ctx, p)
	if err != nil {
		return OIDCEndpoints{}, err
	}
	var claims struct {
		Issuer   string `json:"issuer"`
		UserInfo string `json:"userinfo_endpoint"`
	}
	_ = prov.Claims(&claims)
	ep := prov.Endpoint()
	return OIDCEndpoints{Issuer: claims.Issuer, Authorization: ep.AuthURL, Token: ep.TokenURL, UserInfo: claims.UserInfo}, nil
}

func (s *Service) oidcProvider(ctx context.Context, id int64) (store.OIDCProvider, error) {
	p, err := s.store.GetOIDCProvider(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.OIDCProvider{}, errOIDCNotFound
	}
	return p, err
}

func oauthConfig(p store.OIDCProvider, prov *oidc.Provider) *oauth2.Config {
	ep := prov.Endpoint()
	ep.AuthStyle = oauth2.AuthStyleInParams // client_id and client_secret in the form body (spec)
	return &oauth2.Config{ClientID: p.ClientID, ClientSecret: p.ClientSecret, Endpoint: ep,
		RedirectURL: p.RedirectURI, Scopes: strings.Fields(p.Scopes)}
}

// OIDCInitiate starts a sign-in with provider id and returns the address of
// the provider's authorization endpoint. redirectTo (a path on this server)
// is where the browser goes once signed in.
func (s *Service) OIDCInitiate(ctx context.Context, id int64, redirectTo string) (string, error) {
	p, err := s.oidcProvider(ctx, id)
	if err != nil {
		return "", err
	}
	if !p.Enabled {
		return "", errOIDCDisabled
	}
	if ctx, err = s.outboundContext(ctx); err != nil {
		return "", err
	}
	prov, err := s.discover(ctx, p)
	if err != nil {
		return "", err
	}
	state := randomToken(oidcStateBytes) // base64url: never StateTagSep
	if s.stateTag != "" {
		state += StateTagSep + s.stateTag
	}
	flow := oidcFlow{providerID: id, nonce: randomToken(oidcNonceBytes), verifier: randomToken(oidcPKCEBytes),
		redirectTo: safeRedirect(redirectTo), expires: s.now().Add(oidcStateTTL)}
	sum := sha256.Sum256([]byte(flow.verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])

	if err := s.addFlow(state, flow); err != nil {
		return "", err
	}
	return oauthConfig(p, prov).AuthCodeURL(state, oidc.Nonce(flow.nonce),
		oauth2.SetAuthURLParam("code_challenge", challenge),
		oauth2.SetAuthURLParam("code_challenge_method", "S256")), nil
}

// safeRedirect keeps only local paths, so that the callback cannot be used
// to send a signed-in browser elsewhere.
func safeRedirect(to string) string {
	if to == "" || !strings.HasPrefix(to, "/") || strings.HasPrefix(to, "//") || strings.Contains(to, `\`) {
		return "/"
	}
	return to
}

// addFlow keeps a pending sign-in, forgetting expired ones.
func (s *Service) addFlow(state string, flow oidcFlow) error {
	s.oidcMu.Lock()
	defer s.oidcMu.Unlock()
	now := s.now()
	for k, f := range s.oidcFlows {
		if now.After(f.expires) {
			delete(s.oidcFlows, k)
		}
	}
	if len(s.oidcFlows) >= maxOIDCFlows {
		return fault.New(fault.TooMany, "Too many sign-ins in progress. Try again later.")
	}
	s.oidcFlows[state] = flow
	return nil
}

// takeFlow removes and returns the pending sign-in of state (single use).
func (s *Service) takeFlow(state string) (oidcFlow, bool) {
	s.oidcMu.Lock()
	defer s.oidcMu.Unlock()
	f, ok := s.oidcFlows[state]
	delete(s.oidcFlows, state)
	if !ok || s.now().After(f.expires) {
		return oidcFlow{}, false
	}
	return f, true
}

// OIDCCallback completes a sign-in: it validates the state, exchanges the
// code (with the PKCE verifier), verifies the ID token and its nonce, reads
// the claims (ID token, then userinfo), finds or creates the local user,
// applies the admin claim and the role mappings, and opens a session.
func (s *Service) OIDCCallback(ctx context.Context, state, code, ip, userAgent string) (Identity, Session, string, error) {
	flow, ok := s.takeFlow(state)
	if !ok || state == "" {
		return Identity{}, Session{}, "", errOIDCState
	}
	if code == "" {
		return Identity{}, Session{}, "", fault.New(fault.Invalid, "Missing authorization code")
	}
	p, err := s.oidcProvider(ctx, flow.providerID)
	if err != nil {
		return Identity{}, Session{}, "", err
	}
	if ctx, err = s.outboundContext(ctx); err != nil {
		return Identity{}, Session{}, "", err
	}
	prov, err := s.discover(ctx, p)
	if err != nil {
		return Identity{}, Session{}, "", err
	}
	cfg := oauthConfig(p, prov)
	xctx, cancel := context.WithTimeout(ctx, oidcHTTPWait)
	defer cancel()
	tok, err := cfg.Exchange(xctx, code, oauth2.SetAuthURLParam("code_verifier", flow.verifier))
	if err != nil {
		return Identity{}, Session{}, "", fault.Wrap(fault.Unauthorized, "OIDC code exchange failed", err).WithDetails(exchangeError(err))
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Identity{}, Session{}, "", fault.New(fault.Unauthorized, "The provider returned no ID token")
	}
	idTok, err := prov.Verifier(&oidc.Config{ClientID: p.ClientID, Now: s.now}).Verify(xctx, raw)
	if err != nil {
		return Identity{}, Session{}, "", fault.Wrap(fault.Unauthorized, "Invalid ID token", err).WithDetails(err.Error())
	}
	if !constantTimeEqual(idTok.Nonce, flow.nonce) {
		return Identity{}, Session{}, "", errOIDCNonce
	}
	claims := map[string]any{}
	if err := idTok.Claims(&claims); err != nil {
		return Identity{}, Session{}, "", fault.Wrap(fault.Unauthorized, "Invalid ID token", err)
	}
	if ui, err := prov.UserInfo(xctx, oauth2.StaticTokenSource(tok)); err == nil && ui.Subject == idTok.Subject {
		extra := map[string]any{}
		if ui.Claims(&extra) == nil {
			for k, v := range extra {
				if _, ok := claims[k]; !ok {
					claims[k] = v // the ID token wins; userinfo fills in
				}
			}
		}
	}
	username := claimString(claims[p.UsernameClaim])
	if username == "" {
		return Identity{}, Session{}, "", errUsernameClaim
	}
	user, err := s.oidcUser(ctx, p, claims, username)
	if err != nil {
		return Identity{}, Session{}, "", err
	}
	sess, err := s.OpenSession(ctx, user, "oidc", ip, userAgent)
	if err != nil {
		return Identity{}, Session{}, "", err
	}
	ident, err := s.identity(ctx, user, "oidc")
	return ident, sess, flow.redirectTo, err
}

// exchangeError shows the provider's error code (e.g. invalid_grant), never
// the request it answered.
func exchangeError(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.ErrorCode != "" {
		return re.ErrorCode
	}
	return "the token endpoint refused the code"
}

// oidcUser finds or creates the local user of a sign-in and applies the
// admin claim and the role mappings, every time.
func (s *Service) oidcUser(ctx context.Context, p store.OIDCProvider, claims map[string]any, username string) (store.User, error) {
	provider := "oidc:" + p.Name
	email := claimString(claims[p.EmailClaim])
	display := claimString(claims[p.DisplayNameClaim])
	u, err := s.store.GetUserByUsername(ctx, username)
	switch {
	case errors.Is(err, store.ErrNotFound):
		u = store.User{Username: username, Email: email, DisplayName: display, IsActive: true, AuthProvider: provider}
		if err := s.store.CreateUser(ctx, &u); err != nil {
			return store.User{}, err
		}
	case err != nil:
		return store.User{}, err
	case u.AuthProvider != provider:
		return store.User{}, errOtherAccount // never take over a local or other provider's account
	case !u.IsActive:
		return store.User{}, ErrInvalidCredentials
	}
	u.Email, u.DisplayName = email, display
	if p.AdminClaim != "" && p.AdminValue != "" {
		u.IsAdmin = claimHasAny(claims[p.AdminClaim], strings.Split(p.AdminValue, ","))
	}
	if err := s.store.UpdateUser(ctx, &u); err != nil {
		return store.User{}, err
	}
	if s.Enterprise() && len(p.RoleMappings) > 0 {
		var want []int64
		for _, m := range p.RoleMappings {
			if claimHasAny(claims[p.RoleMappingsClaim], []string{m.ClaimValue}) {
				want = append(want, m.RoleID)
			}
		}
		if err := s.store.SyncMappedRoles(ctx, u.ID, "oidc:"+strconv.FormatInt(p.ID, 10), want); err != nil {
			return store.User{}, err
		}
	}
	return u, nil
}

// claimString reads a string claim.
func claimString(v any) string {
	s, _ := v.(string)
	return strings.TrimSpace(s)
}

// claimHasAny reports whether a claim (a string or a list of strings) holds
// one of values exactly (case-sensitive; values are trimmed).
func claimHasAny(claim any, values []string) bool {
	var have []string
	switch c := claim.(type) {
	case string:
		have = []string{c}
	case []any:
		for _, x := range c {
			if s, ok := x.(string); ok {
				have = append(have, s)
			}
		}
	}
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v != "" && slices.Contains(have, v) {
			return true
		}
	}
	return false
}

// OIDCProviders lists the enabled providers for the login page.
func (s *Service) OIDCProviders(ctx context.Context) ([]store.OIDCProvider, error) {
	all, err := s.store.ListOIDCProviders(ctx)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, p := range all {
		if p.Enabled {
			out = append(out, p)
		}
	}
	return out, nil
}

// SaveOIDC validates and stores a provider (create when ID is 0). Role
// mappings are an enterprise feature.
func (s *Service) SaveOIDC(ctx context.Context, p *store.OIDCProvider) error {
	if err := ValidateOIDC(p); err != nil {
		return err
	}
	if len(p.RoleMappings) > 0 {
		if err := s.RequireEnterprise(); err != nil {
			return err
		}
		for _, m := range p.RoleMappings {
			if _, err := s.GetRole(ctx, m.RoleID); err != nil {
				return fault.Invalidf("roleMappings: role %d does not exist", m.RoleID)
			}
		}
	}
	var err error
	if p.ID == 0 {
		err = s.store.CreateOIDCProvider(ctx, p)
	} else {
		err = s.store.UpdateOIDCProvider(ctx, p)
	}
	switch {
	case errors.Is(err, store.ErrConflict):
		return fault.New(fault.Conflict, "An OIDC provider with this name already exists")
	case errors.Is(err, store.ErrNotFound):
		return errOIDCNotFound
	}
	return err
}

// GetOIDC returns a provider.
func (s *Service) GetOIDC(ctx context.Context, id int64) (store.OIDCProvider, error) {
	return s.oidcProvider(ctx, id)
}

// DeleteOIDC deletes a provider.
func (s *Service) DeleteOIDC(ctx context.Context, id int64) error {
	if err := s.store.DeleteOIDCProvider(ctx, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errOIDCNotFound
		}
		return err
	}
	return nil
}
