package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// auditPoll is how often an audit stream looks for entries other servers
// sharing the database wrote (this server's own wake it at once).
const auditPoll = 2 * time.Second

// streamAudit sends, as SSE, an "entry" event (the entry as the audit list
// has it) for each audit entry written from now on, on any server sharing
// the database, oldest first; first "connected". The audit list's filters
// (userId, username, environmentId, action, entityType) narrow it. An
// enterprise feature, like the list.
func (s *Server) streamAudit(c *gin.Context) error {
	if err := s.auth.RequireEnterprise(); err != nil {
		return err
	}
	f, err := s.auditFilter(c)
	if err != nil {
		return err
	}
	f.Since, f.Until, f.Limit, f.Offset = nil, nil, 0, 0
	ctx := c.Request.Context()
	after, err := s.store.LastAuditID(ctx)
	if err != nil {
		return err
	}
	es := startEvents(c)
	defer es.Close()
	if err := es.Send("connected", map[string]any{}); err != nil {
		return err
	}
	tick := time.NewTicker(auditPoll)
	defer tick.Stop()
	for {
		wake := s.sys.audit.wait()
		list, err := s.store.AuditAfter(ctx, after, f, 500)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			s.log.Warn("audit stream: read entries", "err", err)
			return es.Send("error", map[string]string{"error": "Failed to read audit entries"})
		}
		for _, e := range list {
			after = max(after, e.ID)
			if err := es.Send("entry", toAuditJSON(e)); err != nil {
				return err
			}
		}
		if len(list) == 500 {
			continue // more are waiting
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-tick.C:
		}
	}
}

// auditUsers answers the distinct usernames of the audit log, sorted (the
// choices of the list's username filter). An enterprise feature.
func (s *Server) auditUsers(c *gin.Context) error {
	if err := s.auth.RequireEnterprise(); err != nil {
		return err
	}
	names, err := s.store.AuditUsernames(c.Request.Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, names)
}

// exportAuditFile answers the audit entries the list's filters select as a
// file to download: format csv (default) or json; limit defaults to every
// entry, up to maxExport. An enterprise feature.
func (s *Server) exportAuditFile(c *gin.Context) error {
	q := c.Request.URL.Query()
	if q.Get("format") == "" {
		// Before anything read the query through gin, which caches it.
		q.Set("format", "csv")
		c.Request.URL.RawQuery = q.Encode()
	}
	return s.listAudit(c)
}
