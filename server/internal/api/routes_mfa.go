package api

// mfaRoutes are the routes of MFA: TOTP enrolment of local accounts. A user
// manages their own MFA; managing someone else's needs users:edit, checked
// by the handlers (mfaTarget). POST records its own audit line: starting
// the setup (user.mfa_setup) and enabling (user.mfa_enable) differ.
func (s *Server) mfaRoutes() []route {
	return []route{
		{"POST", "/api/users/{id}/mfa", Authenticated, NoEnv, Quiet, false, s.postMFA},
		{"DELETE", "/api/users/{id}/mfa", Authenticated, NoEnv, "user.mfa_disable", false, s.deleteMFA},
	}
}
