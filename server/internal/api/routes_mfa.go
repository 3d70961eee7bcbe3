package api

// mfaRoutes are the routes of MFA: TOTP enrolment of local accounts.
func (s *Server) mfaRoutes() []route {
	return nil
}
