package api

import "github.com/gin-gonic/gin"

// contentSecurityPolicy is the policy of every answer, the console's pages
// and the API docs page included: scripts only from Berth itself (no inline
// script, no eval), never framed, no plugins. Inline styles stay allowed:
// the console's components and the API docs set style attributes, which
// cannot run code. Data and blob images are the MFA QR code and the pictures
// the console previews before an upload; https images are the app
// templates' logos, which their lists link from the internet (an image
// cannot run code, and Referrer-Policy keeps Berth's URLs to itself).
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data: blob: https:; font-src 'self' data:; connect-src 'self'; object-src 'none'; " +
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
