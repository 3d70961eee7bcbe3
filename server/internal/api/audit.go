package api

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// auditJSON is one audit entry as clients decode it.
type auditJSON struct {
	ID            int64     `json:"id"`
	Timestamp     time.Time `json:"timestamp"`
	UserID        *int64    `json:"userId"`
	Username      string    `json:"username"`
	EnvironmentID *int64    `json:"environmentId"`
	Action        string    `json:"action"`
	EntityType    string    `json:"entityType"`
	EntityID      string    `json:"entityId"`
	EntityName    string    `json:"entityName"`
	Description   string    `json:"description"`
	Details       string    `json:"details"`
	IP            string    `json:"ipAddress"`
}

func toAuditJSON(e store.AuditEntry) auditJSON {
	return auditJSON{ID: e.ID, Timestamp: e.CreatedAt, UserID: e.UserID, Username: e.Username, EnvironmentID: e.EnvironmentID,
		Action: e.Action, EntityType: e.EntityType, EntityID: e.EntityID, EntityName: e.EntityName,
		Description: e.Description, Details: e.Details, IP: e.IP}
}

// auditFilter reads the listing's filters: userId, username, environmentId,
// action (a trailing * matches a prefix), entityType, the reference's
// multi-valued usernames, actions and entityTypes (comma-separated, any of
// them) and labels (environments bearing any of them), since, until
// (RFC 3339), limit (default 100, at most 1000; exports: all, up to 100000)
// and offset. (The list reads fromDate and toDate besides.)
func (s *Server) auditFilter(c *gin.Context) (store.AuditFilter, error) {
	q := c.Request.URL.Query()
	f := store.AuditFilter{Username: q.Get("username"), Action: q.Get("action"), EntityType: q.Get("entityType"),
		Usernames: splitList(c.QueryArray("usernames")), Actions: splitList(c.QueryArray("actions")),
		EntityTypes: splitList(c.QueryArray("entityTypes"))}
	if labels := splitList(c.QueryArray("labels")); labels != nil {
		envs, err := s.store.ListEnvironments(c.Request.Context())
		if err != nil {
			return f, err
		}
		f.EnvironmentIDs = labelledEnvironments(envs, labels)
	}
	intParam := func(name string) (*int64, error) {
		v := q.Get(name)
		if v == "" {
			return nil, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, fault.Invalidf("%s must be a non-negative integer", name)
		}
		return &n, nil
	}
	timeParam := func(name string) (*time.Time, error) {
		v := q.Get(name)
		if v == "" {
			return nil, nil
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, fault.Invalidf("%s must be an RFC 3339 time", name)
		}
		return &t, nil
	}
	var err error
	if f.UserID, err = intParam("userId"); err != nil {
		return f, err
	}
	if f.EnvironmentID, err = intParam("environmentId"); err != nil {
		return f, err
	}
	if f.Since, err = timeParam("since"); err != nil {
		return f, err
	}
	if f.Until, err = timeParam("until"); err != nil {
		return f, err
	}
	limit, err := intParam("limit")
	if err != nil {
		return f, err
	}
	offset, err := intParam("offset")
	if err != nil {
		return f, err
	}
	if limit != nil {
		f.Limit = int(*limit)
	}
	if offset != nil {
		f.Offset = int(*offset)
	}
	return f, nil
}

// listAudit answers the audit log as a page of JSON, or, with format=json or
// format=csv, as a file to download. An enterprise feature.
func (s *Server) listAudit(c *gin.Context) error {
	if err := s.auth.RequireEnterprise(); err != nil {
		return err
	}
	format := c.Query("format")
	if format != "" && format != "json" && format != "csv" {
		return fault.New(fault.Invalid, "format must be json or csv")
	}
	f, err := s.auditFilter(c)
	if err != nil {
		return err
	}
	from, to, err := dateRange(c.Query("fromDate"), c.Query("toDate")) // ISO 8601, inclusive
	if err != nil {
		return err
	}
	narrowRange(&f.Since, &f.Until, from, to)
	var (
		entries []store.AuditEntry
		total   int
	)
	if format == "" {
		entries, total, err = s.store.ListAudit(c.Request.Context(), f)
	} else {
		entries, err = s.exportAudit(c, f)
	}
	if err != nil {
		return err
	}
	out := convert(entries, toAuditJSON)
	stamp := s.now().UTC().Format("20060102-150405")
	switch format {
	case "json":
		c.Header("Content-Disposition", `attachment; filename="berth-audit-`+stamp+`.json"`)
		return writeJSON(c, http.StatusOK, out)
	case "csv":
		c.Header("Content-Type", "text/csv; charset=utf-8")
		c.Header("Content-Disposition", `attachment; filename="berth-audit-`+stamp+`.csv"`)
		cw := csv.NewWriter(c.Writer)
		_ = cw.Write([]string{"id", "timestamp", "userId", "username", "environmentId", "action", "entityType",
			"entityId", "entityName", "description", "details", "ipAddress"})
		for _, e := range out {
			_ = cw.Write([]string{strconv.FormatInt(e.ID, 10), e.Timestamp.Format(time.RFC3339Nano), optInt(e.UserID),
				e.Username, optInt(e.EnvironmentID), e.Action, e.EntityType, e.EntityID, e.EntityName,
				csvSafe(e.Description), csvSafe(e.Details), e.IP})
		}
		cw.Flush()
		return cw.Error()
	}
	limit := f.Limit
	if limit == 0 {
		limit = 100
	}
	return writeJSON(c, http.StatusOK, map[string]any{"entries": out, "total": total, "limit": limit, "offset": f.Offset})
}

// maxExport bounds the entries of one export.
const maxExport = 100000

// exportAudit collects the entries an export asks for (limit, or all up to
// maxExport), page by page.
func (s *Server) exportAudit(c *gin.Context, f store.AuditFilter) ([]store.AuditEntry, error) {
	want := f.Limit
	if want <= 0 || want > maxExport {
		want = maxExport
	}
	var out []store.AuditEntry
	for len(out) < want {
		f.Limit = min(1000, want-len(out))
		page, _, err := s.store.ListAudit(c.Request.Context(), f)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) < f.Limit {
			break
		}
		f.Offset += len(page)
	}
	return out, nil
}

func optInt(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10)
}

// csvSafe defuses spreadsheet formulas in free text (CSV injection).
func csvSafe(s string) string {
	if s != "" && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@') {
		return "'" + s
	}
	return s
}
