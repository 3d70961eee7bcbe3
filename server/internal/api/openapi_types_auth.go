package api

import (
	"github.com/berth-dev/berth/server/internal/license"
	"github.com/berth-dev/berth/server/internal/store"
)

// authOps: LDAP, OIDC, the license, MFA, users and an environment's
// settings (openapi_types.go says how the registry is read).
var authOps = map[string]apiOp{
	"GET /api/auth/ldap":            {Summary: "LDAP configurations (bind passwords masked)", Response: []ldapConfigJSON{}},
	"POST /api/auth/ldap":           {Summary: "Add an LDAP configuration", Request: ldapConfigRequest{}, Response: ldapConfigJSON{}, Status: 201},
	"GET /api/auth/ldap/{id}":       {Summary: "An LDAP configuration", Response: ldapConfigJSON{}},
	"PATCH /api/auth/ldap/{id}":     {Summary: "Change an LDAP configuration (absent fields kept)", Request: ldapConfigRequest{}, Response: ldapConfigJSON{}},
	"PUT /api/auth/ldap/{id}":       {Summary: "Change an LDAP configuration (as PATCH)", Request: ldapConfigRequest{}, Response: ldapConfigJSON{}},
	"DELETE /api/auth/ldap/{id}":    {Summary: "Delete an LDAP configuration", Response: successAnswer{}},
	"POST /api/auth/ldap/{id}/test": {Summary: "Bind and search: {success, userCount}, or {success: false, error}", Response: ldapTestAnswer{}},

	"GET /api/auth/oidc":      {Summary: "OIDC providers (client secrets masked)", Response: []oidcJSON{}},
	"POST /api/auth/oidc":     {Summary: "Add an OIDC provider", Request: oidcRequest{}, Response: oidcJSON{}, Status: 201},
	"GET /api/auth/oidc/{id}": {Summary: "An OIDC provider", Response: oidcJSON{}},
	"PATCH /api/auth/oidc/{id}": {Summary: "Change an OIDC provider (absent fields kept)", Request: oidcRequest{},
		Response: oidcJSON{}},
	"PUT /api/auth/oidc/{id}":       {Summary: "Change an OIDC provider (as PATCH)", Request: oidcRequest{}, Response: oidcJSON{}},
	"DELETE /api/auth/oidc/{id}":    {Summary: "Delete an OIDC provider", Response: successAnswer{}},
	"POST /api/auth/oidc/{id}/test": {Summary: "Discover the provider: {success, issuer, endpoints}, or {success: false, error, details}", Response: oidcTestAnswer{}},
	"GET /api/auth/oidc/{id}/initiate": {Summary: "Start an OIDC sign-in: a redirect to the provider", Status: 302, IgnoresBody: true,
		Query: []queryParam{{"redirect", "string", "where to go after signing in"}}},
	"POST /api/auth/oidc/{id}/initiate": {Summary: "Start an OIDC sign-in: the provider's address to go to", Request: oidcInitiateInput{}, Response: urlAnswer{},
		Query: []queryParam{{"redirect", "string", "where to go after signing in (the body's redirect wins)"}}},
	"GET /api/auth/oidc/callback": {Summary: "The provider's return: signs in, then redirects (to /login?error= on failure)", Status: 302,
		Query: []queryParam{{"code", "string", "the authorization code"}, {"state", "string", "the state of the sign-in"}, {"error", "string", "the provider's refusal"},
			{"error_description", "string", "the provider's words on its refusal, shown with it"}}},

	"GET /api/license":    {Summary: "The installed license and edition", Response: licenseAnswer{}},
	"POST /api/license":   {Summary: "Install a license", Request: licenseInput{}, Response: licenseAnswer{}},
	"DELETE /api/license": {Summary: "Remove the license", Response: successAnswer{}},

	"POST /api/users/{id}/mfa": {Summary: "Start MFA enrolment ({} → secret, QR code) or complete it ({action: verify, token} → backup codes)",
		Request: mfaInput{}, Response: mfaAnswer{}},
	"DELETE /api/users/{id}/mfa": {Summary: "Turn a user's MFA off; the caller confirms with their current password or a current code of their own MFA (400 without, 403 when wrong)",
		Request: disableMFAInput{}, Response: messageAnswer{}},

	"POST /api/users":     {Summary: "Create a local user (the first with the setup token)", Request: createUserInput{}, Response: userJSON{}, Status: 201},
	"PUT /api/users/{id}": {Summary: "Update a user (absent fields kept); demoting or deactivating the last active admin is 409 unless confirmDisableAuth, which turns authentication off", Request: updateUserInput{}, Response: updateUserAnswer{}},
	"DELETE /api/users/{id}/roles": {Summary: "Unassign a role ({roleId, environmentId} in the body or the query)", Request: assignmentRequest{}, Response: successAnswer{},
		Query: []queryParam{{"roleId", "integer", "the role"}, {"environmentId", "integer", "the environment of the assignment (absent: global)"}}},

	"GET /api/environments/{id}/update-check":  {Summary: "An environment's update check", Response: updateCheckAnswer{}},
	"POST /api/environments/{id}/update-check": {Summary: "Save an environment's update check (absent fields kept)", Request: updateCheckInput{}, Response: updateCheckAnswer{}},
	"GET /api/environments/{id}/image-prune":   {Summary: "An environment's image prune schedule", Response: imagePruneAnswer{}},
	"POST /api/environments/{id}/image-prune":  {Summary: "Save an environment's image prune schedule (absent fields kept)", Request: imagePruneInput{}, Response: imagePruneAnswer{}},
	"PUT /api/environments/{id}/image-prune":   {Summary: "Prune the environment's images now (answers when done)", Response: executionAnswer{}},
	"GET /api/environments/{id}/disk-warning":  {Summary: "An environment's disk space warning", Response: diskWarningAnswer{}},
	"POST /api/environments/{id}/disk-warning": {Summary: "Save an environment's disk space warning (absent fields kept)", Request: diskWarningInput{}, Response: diskWarningAnswer{}},
	"GET /api/environments/{id}/timezone":      {Summary: "The zone of an environment's schedules", Response: timezoneAnswer{}},
	"POST /api/environments/{id}/timezone":     {Summary: "Set the zone of an environment's schedules (\"\": the server's)", Request: timezoneInput{}, Response: timezoneAnswer{}},
}

// ldapTestAnswer is {success, userCount} or {success: false, error}.
type ldapTestAnswer struct {
	Success   bool   `json:"success"`
	UserCount int    `json:"userCount,omitempty"`
	Error     string `json:"error,omitempty"`
}

// oidcTestAnswer is {success, issuer, endpoints} or {success: false, error, details}.
type oidcTestAnswer struct {
	Success   bool           `json:"success"`
	Issuer    string         `json:"issuer,omitempty"`
	Endpoints *oidcEndpoints `json:"endpoints,omitempty"`
	Error     string         `json:"error,omitempty"`
	Details   any            `json:"details,omitempty"`
}

type oidcEndpoints struct {
	Authorization string `json:"authorization"`
	Token         string `json:"token"`
	UserInfo      string `json:"userinfo"`
}

type oidcInitiateInput struct {
	Redirect string `json:"redirect"`
}

type urlAnswer struct {
	URL string `json:"url"`
}

// licenseAnswer is the license state; after an install, with success.
type licenseAnswer struct {
	Edition string           `json:"edition"` // community or enterprise
	License *license.License `json:"license"`
	Expired bool             `json:"expired,omitempty"`
	Success bool             `json:"success,omitempty"`
}

type licenseInput struct {
	Name    string `json:"name"`    // the name the license is issued to
	Key     string `json:"key"`     // the license document
	License string `json:"license"` // Berth's alias of key (without name)
}

type mfaInput struct {
	Action string `json:"action"` // "", "setup" or "verify"
	Token  string `json:"token"`
}

// mfaAnswer is {secret, otpauthUrl, qrDataUrl} when enrolment starts, or
// {success, message, backupCodes} when it is verified.
type mfaAnswer struct {
	Secret      string   `json:"secret,omitempty"`
	OTPAuthURL  string   `json:"otpauthUrl,omitempty"`
	QRDataURL   string   `json:"qrDataUrl,omitempty"`
	Success     bool     `json:"success,omitempty"`
	Message     string   `json:"message,omitempty"`
	BackupCodes []string `json:"backupCodes,omitempty"`
}

type messageAnswer struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

type createUserInput struct {
	Username    string `json:"username"`
	Password    string `json:"password"`
	Email       string `json:"email"`
	DisplayName string `json:"displayName"`
	IsAdmin     bool   `json:"isAdmin"`
	SetupToken  string `json:"setupToken"`
}

type updateUserInput struct {
	Username    *string `json:"username"`
	Password    *string `json:"password"`
	Email       *string `json:"email"`
	DisplayName *string `json:"displayName"`
	IsAdmin     *bool   `json:"isAdmin"`
	IsActive    *bool   `json:"isActive"`
	// ConfirmDisableAuth lets a change take the last active admin's rights,
	// turning authentication off (the reference's).
	ConfirmDisableAuth bool `json:"confirmDisableAuth"`
}

// updateUserAnswer is the user; authDisabled when the change turned
// authentication off.
type updateUserAnswer struct {
	userJSON
	AuthDisabled bool `json:"authDisabled,omitempty"`
}

// deleteUserAnswer is {success}; authDisabled when the deletion turned
// authentication off.
type deleteUserAnswer struct {
	Success      bool `json:"success"`
	AuthDisabled bool `json:"authDisabled,omitempty"`
}

// updateCheckAnswer is {settings}; after a change, with success.
type updateCheckAnswer struct {
	Success  bool                `json:"success,omitempty"`
	Settings updateCheckSettings `json:"settings"`
}

type updateCheckInput struct {
	Enabled               *bool   `json:"enabled"`
	Cron                  *string `json:"cron"`
	CronExpression        *string `json:"cronExpression"` // a synonym of cron
	AutoUpdate            *bool   `json:"autoUpdate"`
	VulnerabilityCriteria *string `json:"vulnerabilityCriteria"`
	// The reference's semver detection: only the defaults are accepted
	// (false, "major", true, false); Berth's check compares digests.
	CheckPinnedVersions     *bool   `json:"checkPinnedVersions"`
	SemverMaxBump           *string `json:"semverMaxBump"`
	SemverMatchFlavor       *bool   `json:"semverMatchFlavor"`
	SemverIncludePrerelease *bool   `json:"semverIncludePrerelease"`
}

type imagePruneAnswer struct {
	Success  bool               `json:"success,omitempty"`
	Settings imagePruneSettings `json:"settings"`
}

type imagePruneInput struct {
	Enabled        *bool   `json:"enabled"`
	CronExpression *string `json:"cronExpression"`
	Cron           *string `json:"cron"` // a synonym of cronExpression
	PruneMode      *string `json:"pruneMode"`
}

type executionAnswer struct {
	Success   bool          `json:"success"`
	Execution executionJSON `json:"execution"`
}

// diskWarningAnswer is Berth's {settings} and, beside it, the reference's
// flat {enabled, mode, threshold, thresholdGb}.
type diskWarningAnswer struct {
	Success     bool              `json:"success,omitempty"`
	Settings    store.DiskWarning `json:"settings"`
	Enabled     bool              `json:"enabled"`
	Mode        string            `json:"mode"`
	Threshold   int               `json:"threshold"`
	ThresholdGb float64           `json:"thresholdGb"`
}

// diskWarningInput: threshold is the reference's name of thresholdPercent.
type diskWarningInput struct {
	Enabled          *bool    `json:"enabled"`
	Mode             *string  `json:"mode"`
	ThresholdPercent *int     `json:"thresholdPercent"`
	Threshold        *int     `json:"threshold"`
	ThresholdGb      *float64 `json:"thresholdGb"`
}

type timezoneAnswer struct {
	Success  bool   `json:"success,omitempty"`
	Timezone string `json:"timezone"`
}

type timezoneInput struct {
	Timezone *string `json:"timezone"`
}
