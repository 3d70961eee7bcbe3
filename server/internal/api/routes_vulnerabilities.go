package api

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/images"
	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/shared/fault"
)

// imageScanRoutes are the routes of issue 21 around images and their
// scans: loading an image tarball, exporting a stored scan, and the
// vulnerability view (the findings of the stored scans of an
// environment's images, with what runs them), whose "scan all" scans every
// image the environment's containers use.
func (s *Server) imageScanRoutes() []route {
	return []route{
		{"POST", "/api/images/load", "images:build", EnvQuery, "image.load", false, s.loadImage},
		{"GET", "/api/images/scan/export", "images:inspect", EnvQuery, "", false, s.exportScan},
		{"GET", "/api/vulnerabilities", "images:view", EnvQuery, "", false, s.listVulnerabilities},
		{"GET", "/api/vulnerabilities/count", "images:view", EnvQuery, "", false, s.countVulnerabilities},
		{"GET", "/api/vulnerabilities/export", "images:view", EnvQuery, "", false, s.exportVulnerabilities},
		{"POST", "/api/vulnerabilities/scan-all", "images:inspect", EnvQuery, "image.scan", false, s.scanAllImages},
	}
}

// imageScanOps document imageScanRoutes.
var imageScanOps = map[string]apiOp{
	"POST /api/images/load": {Summary: "Load the images of a docker save tarball (gzipped or not) into the environment's engine: the raw request body (application/x-tar), or the file part of a form",
		Request: imageTarball{}, RequestContent: mediaMultipart + ", " + mediaTar + ", application/gzip", Response: loadAnswer{}},
	"GET /api/images/scan/export": {Summary: "Download the newest stored scan of an image (format json, the default, or csv)",
		Content: "text/csv", AlsoJSON: true, Response: []scan.Result{}, Query: []queryParam{
			{"imageId", "string", "the image's id or name"}, {"image", "string", "imageId's fallback"},
			{"scanner", "string", "scanner_a or scanner_b (absent: each scanner's newest)"}, {"format", "string", "json (default) or csv"}}},
	"GET /api/vulnerabilities": {Summary: "A page of the findings of the environment's stored scans, filtered and sorted",
		Response: vulnerabilitiesAnswer{}, Query: findingQuery},
	"GET /api/vulnerabilities/count": {Summary: "Totals of the findings (filtered as the list is) by severity, and the images, containers and stacks they concern",
		Response: scan.FindingCounts{}, Query: findingQuery},
	"GET /api/vulnerabilities/export": {Summary: "Download the findings, filtered and sorted as the list is (format json, the default, or csv)",
		Content: "text/csv", AlsoJSON: true, Response: []scan.Finding{}, Query: append([]queryParam{
			{"format", "string", "json (default) or csv"}}, findingQuery...)},
	"POST /api/vulnerabilities/scan-all": {Summary: "Scan every image the environment's containers use: a job ({jobId}; with Accept: application/json, its result). A scanner that cannot run is refused (400, saying why) before the job starts",
		Response: anyOf{jobStartAnswer{}, scan.ScanAllResult{}}, Query: []queryParam{
			{"scanner", "string", "scanner_a, scanner_b or both (must be able to run); without it, those of the environment's setting that can run, else the other one"}}},
}

var findingQuery = []queryParam{
	{"q", "string", "words in the CVE, package, image, description, containers or stacks"},
	{"severity", "string", "critical, high, medium, low, negligible or unknown (comma-separated: any of them)"},
	{"image", "string", "an image's name or id"}, {"container", "string", "a container's name"},
	{"stack", "string", "a stack's name"}, {"fixable", "boolean", "only findings with (true) or without (false) a fixed version"},
	{"sort", "string", "severity (default), cve, package, version, fixedVersion, image or scannedAt"},
	{"dir", "string", "asc (default) or desc"}, {"limit", "integer", "findings a page (default 100, at most 1000)"},
	{"offset", "integer", "findings skipped"},
}

// imageTarball is the form of an image load (a raw body is the tarball
// itself).
type imageTarball struct {
	File formBinary `json:"file"`
}

// loadAnswer is the answer of an image load.
type loadAnswer struct {
	Success bool   `json:"success"`
	Loaded  string `json:"loaded"` // the engine's report: "Loaded image: alpine:3.20"
}

// vulnerabilitiesAnswer is a page of findings.
type vulnerabilitiesAnswer struct {
	Findings []scan.Finding `json:"findings"`
	Total    int            `json:"total"`
	Limit    int            `json:"limit"`
	Offset   int            `json:"offset"`
}

var errLoadBody = fault.New(fault.Invalid, "Request body (an image tar) is required")

// loadImage streams the request body (a docker save tarball), or the
// first file part of a multipart form, to the engine, at most
// images.MaxLoadSize of it.
func (s *Server) loadImage(c *gin.Context) error {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, images.MaxLoadSize)
	var src io.Reader = c.Request.Body
	switch ct := c.ContentType(); {
	case ct == "application/json":
		return fault.New(fault.Invalid, "Send the image tar as the request body (Content-Type application/x-tar) or as the file of a form")
	case strings.HasPrefix(ct, "multipart/"):
		mr, err := c.Request.MultipartReader()
		if err != nil {
			return fault.Wrap(fault.Invalid, "Invalid multipart form", err)
		}
		part, err := firstFilePart(mr)
		if err != nil {
			return err
		}
		defer part.Close()
		src = part
	}
	body := bufio.NewReader(src)
	if _, err := body.Peek(1); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return err
		}
		return errLoadBody
	}
	loaded, err := s.images.Load(c.Request.Context(), envOf(c), body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return tooBig
		}
		return err
	}
	noteAudit(c, "", strings.TrimPrefix(loaded, "Loaded image: "))
	return writeJSON(c, http.StatusOK, loadAnswer{Success: true, Loaded: loaded})
}

// firstFilePart is the first part of a form that is a file.
func firstFilePart(mr *multipart.Reader) (*multipart.Part, error) {
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, errLoadBody
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return nil, err
			}
			return nil, fault.Wrap(fault.Invalid, "Invalid multipart form", err)
		}
		if part.FileName() != "" {
			return part, nil
		}
		part.Close()
	}
}

// exportFormat reads format: json (default) or csv.
func exportFormat(c *gin.Context) (string, error) {
	switch f := strings.ToLower(strings.TrimSpace(c.Query("format"))); f {
	case "", "json":
		return "json", nil
	case "csv":
		return f, nil
	default:
		return "", fault.Invalidf("Unsupported format '%s' (json or csv)", f)
	}
}

// exportScan answers the newest stored scan of an image: each scanner's,
// or the one scanner's asked for.
func (s *Server) exportScan(c *gin.Context) error {
	format, err := exportFormat(c)
	if err != nil {
		return err
	}
	image := strings.TrimSpace(c.Query("imageId"))
	if image == "" {
		image = strings.TrimSpace(c.Query("image"))
	}
	if image == "" {
		return fault.New(fault.Invalid, "imageId is required")
	}
	scanner := c.Query("scanner")
	if err := s.scan.CheckRequest(c.Request.Context(), envOf(c).ID, image, scanner); err != nil {
		return err
	}
	var results []scan.Result
	for _, sc := range []string{scan.ScannerA, scan.ScannerB} {
		if scanner != "" && sc != scanner {
			continue
		}
		r, found, err := s.scan.Latest(c.Request.Context(), envOf(c).ID, image, sc)
		if err != nil {
			return err
		}
		if found {
			results = append(results, r)
		}
	}
	if len(results) == 0 {
		return fault.New(fault.NotFound, "No scan results found for this image")
	}
	name := "berth-scan-" + fileSafe(results[0].ImageName)
	if format == "json" {
		c.Header("Content-Disposition", `attachment; filename="`+name+`.json"`)
		return writeJSON(c, http.StatusOK, results)
	}
	var rows [][]string
	for i, r := range results {
		rs := scan.ResultCSV(r)
		if i == 0 {
			rows = append(rows, append([]string{"scanner"}, rs[0]...))
		}
		for _, row := range rs[1:] {
			rows = append(rows, append([]string{r.Scanner}, row...))
		}
	}
	return writeCSV(c, name+".csv", rows)
}

// fileSafe makes s usable in a download's file name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// writeCSV answers rows as a CSV download (cells a spreadsheet would take
// for formulas defused).
func writeCSV(c *gin.Context, filename string, rows [][]string) error {
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="`+filename+`"`)
	cw := csv.NewWriter(c.Writer)
	for _, row := range rows {
		for i := range row {
			row[i] = csvSafe(row[i])
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// findingFilter reads the findings' filter and page.
func findingFilter(c *gin.Context) (scan.FindingFilter, int, int, error) {
	q := c.Request.URL.Query()
	f := scan.FindingFilter{Q: q.Get("q"), Image: q.Get("image"), Container: q.Get("container"), Stack: q.Get("stack"),
		Sort: q.Get("sort")}
	for _, v := range q["severity"] {
		for _, sv := range strings.Split(v, ",") {
			if sv = strings.ToLower(strings.TrimSpace(sv)); sv != "" && sv != "all" {
				f.Severity = append(f.Severity, sv)
			}
		}
	}
	switch strings.ToLower(q.Get("dir")) {
	case "", "asc":
	case "desc":
		f.Desc = true
	default:
		return f, 0, 0, fault.New(fault.Invalid, "dir must be asc or desc")
	}
	if q.Get("fixable") != "" {
		v, err := queryBool(c, "fixable", false)
		if err != nil {
			return f, 0, 0, err
		}
		f.Fixable = &v
	}
	limit, err := queryInt(c, "limit", 100)
	if err != nil {
		return f, 0, 0, err
	}
	offset, err := queryInt(c, "offset", 0)
	if err != nil {
		return f, 0, 0, err
	}
	if limit < 1 || limit > 1000 || offset < 0 {
		return f, 0, 0, fault.New(fault.Invalid, "limit must be between 1 and 1000 and offset not negative")
	}
	return f, limit, offset, f.Validate()
}

// findings are the findings of the request's environment that its filter
// selects; none without an environment (the reference's answer).
func (s *Server) findings(c *gin.Context) ([]scan.Finding, int, int, error) {
	f, limit, offset, err := findingFilter(c)
	if err != nil || c.Query("env") == "" {
		return []scan.Finding{}, limit, offset, err
	}
	env := envOf(c)
	use, err := s.imageUse(c.Request.Context(), env.ID)
	if err != nil {
		return nil, 0, 0, err
	}
	all, err := s.scan.Findings(c.Request.Context(), env.ID, use)
	if err != nil {
		return nil, 0, 0, err
	}
	return f.Apply(all), limit, offset, nil
}

// imageUse is the images on env's engine (by id) and what runs them; nil
// when the engine cannot be reached (every stored scan counts then).
func (s *Server) imageUse(ctx context.Context, envID int64) (map[string]scan.ImageUse, error) {
	env, err := s.store.GetEnvironment(ctx, envID)
	if err != nil {
		return nil, err
	}
	cl, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return nil, nil //nolint:nilerr // offline: the stored scans alone
	}
	imgs, err := cl.ListImages(ctx)
	if err != nil {
		return nil, nil //nolint:nilerr
	}
	out := make(map[string]scan.ImageUse, len(imgs))
	for _, im := range imgs {
		out[im.ID] = scan.ImageUse{}
	}
	ctrs, err := cl.ListContainers(ctx, true)
	if err != nil {
		return out, nil //nolint:nilerr
	}
	for _, ct := range ctrs {
		u, ok := out[ct.ImageID]
		if !ok {
			continue
		}
		u.Containers = append(u.Containers, ct.Name)
		if p := ct.Labels["com.docker.compose.project"]; p != "" && !slices.Contains(u.Stacks, p) {
			u.Stacks = append(u.Stacks, p)
		}
		out[ct.ImageID] = u
	}
	return out, nil
}

func (s *Server) listVulnerabilities(c *gin.Context) error {
	all, limit, offset, err := s.findings(c)
	if err != nil {
		return err
	}
	page := all[min(offset, len(all)):min(offset+limit, len(all))]
	return writeJSON(c, http.StatusOK, vulnerabilitiesAnswer{Findings: page, Total: len(all), Limit: limit, Offset: offset})
}

func (s *Server) countVulnerabilities(c *gin.Context) error {
	all, _, _, err := s.findings(c)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, scan.Count(all))
}

func (s *Server) exportVulnerabilities(c *gin.Context) error {
	format, err := exportFormat(c)
	if err != nil {
		return err
	}
	all, _, _, err := s.findings(c)
	if err != nil {
		return err
	}
	name := "berth-vulnerabilities-" + s.now().UTC().Format("20060102-150405")
	if format == "json" {
		c.Header("Content-Disposition", `attachment; filename="`+name+`.json"`)
		return writeJSON(c, http.StatusOK, all)
	}
	return writeCSV(c, name+".csv", scan.FindingsCSV(all))
}

// scanAllImages starts a job scanning every image the environment's
// containers use (each once, by id).
func (s *Server) scanAllImages(c *gin.Context) error {
	env := envOf(c)
	cl, err := s.engines.Client(c.Request.Context(), env.Endpoint())
	if err != nil {
		return err
	}
	ctrs, err := cl.ListContainers(c.Request.Context(), true)
	if err != nil {
		return err
	}
	var ids []string
	for _, ct := range ctrs {
		if ct.ImageID != "" && !slices.Contains(ids, ct.ImageID) {
			ids = append(ids, ct.ImageID)
		}
	}
	names, err := s.scan.Choose(c.Request.Context(), env, c.Query("scanner"), s.findScannerImage)
	if err != nil {
		return err
	}
	noteAudit(c, "", "all images in use")
	return s.runJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		return s.scan.ScanImages(ctx, env, names, ids, emit)
	})
}
