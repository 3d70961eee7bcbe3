package api

import "github.com/gin-gonic/gin"

// contentSecurityPolicy is the policy of every answer, the console's pages
// and the API docs page included: scripts only from Berth itself (no inline
// script, no eval), never framed, no plugins. Inline styles stay allowed:
// the console's components and the API docs set style attributes, which
// cannot run code. Data and blob images are the MFA QR code and the pictures
// the console previews before an upload. No image comes from another site:
// the app templates' logos are served by Berth itself
// (GET /api/templates/{id}/logo), so the console works offline and tells no
// other site who opened it.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; object-src 'none'; " +
	"base-uri 'self'; frame-ancestors 'none'"

// securityHeaders sets the headers every answer carries. A handler that
// serves content of its own (a picture, a file of a volume) may tighten the
// policy by setting the header again.
func securityHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	c.Next()
}
