package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// The reference's own clients (scripts, an infrastructure-as-code provider,
// an MCP server, exporters, a mobile app) call the operations of
// testdata/reference-operations.json: each operation's method, path, query
// parameter names and JSON body field names, extracted from the reference's
// generated OpenAPI description of its release 1.0.42 (nothing else of it is
// kept). The tests of this file walk that inventory against Berth's route
// table and the request types its handlers bind.

// referenceInventory is testdata/reference-operations.json.
type referenceInventory struct {
	// ExcludedTags are groups of operations Berth does not serve yet, with
	// the reason.
	ExcludedTags map[string]string `json:"excludedTags"`
	// Unserved are single operations ("GET /audit") Berth does not serve,
	// with the reason.
	Unserved map[string]string `json:"unserved"`
	// Unread are request fields ("POST /api/containers body.x" or "… query.x")
	// Berth's handler does not read, with the reason.
	Unread     map[string]string    `json:"unread"`
	Operations []referenceOperation `json:"operations"`
}

type referenceOperation struct {
	Method string   `json:"method"`
	Path   string   `json:"path"`
	Tag    string   `json:"tag"`
	Query  []string `json:"query"`
	Body   []string `json:"body"`
}

func (o referenceOperation) key() string { return o.Method + " " + o.Path }

func loadReferenceInventory(t *testing.T) referenceInventory {
	t.Helper()
	raw, err := os.ReadFile("testdata/reference-operations.json")
	if err != nil {
		t.Fatal(err)
	}
	var inv referenceInventory
	if err := json.Unmarshal(raw, &inv); err != nil {
		t.Fatal(err)
	}
	if len(inv.Operations) < 300 {
		t.Fatalf("the inventory holds %d operations; the reference has 355", len(inv.Operations))
	}
	return inv
}

// templateParam matches a path parameter in either syntax.
var templateParam = regexp.MustCompile(`\{[^}]+\}|:[^/]+`)

// pathShape is a path template with its parameters unnamed
// ("/api/containers/{}/logs"), so that two spellings compare.
func pathShape(p string) string { return templateParam.ReplaceAllString(p, "{}") }

// routedBy builds a gin engine with every route of the table, each
// answering the template that matched, and returns a function that
// says which template serves a method and path ("" when the router has no
// route: its 404 or 405).
func routedBy(t *testing.T) func(method, path string) string {
	t.Helper()
	gin.SetMode(gin.TestMode)
	e := gin.New()
	for _, rt := range (&Server{}).routes() {
		e.Handle(rt.Method, ginPath(rt.Path), func(c *gin.Context) { c.String(http.StatusOK, c.FullPath()) })
	}
	e.HandleMethodNotAllowed = true
	return func(method, path string) string {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		if rec.Code != http.StatusOK {
			return ""
		}
		return rec.Body.String()
	}
}

// samplePath fills a template's parameters with a value an id could have.
func samplePath(p string) string { return templateParam.ReplaceAllString(p, "1") }

// TestEveryReferenceOperationIsServed walks the reference's operations: each
// must reach the route of its own path (not the router's 404 or 405, and not
// a route whose parameter swallows a literal segment, as "check-updates"
// once answered "Container not found"), unless the inventory names it as not
// served, with the reason.
func TestEveryReferenceOperationIsServed(t *testing.T) {
	inv := loadReferenceInventory(t)
	route := routedBy(t)
	served := 0
	for _, op := range inv.Operations {
		got := route(op.Method, samplePath(op.Path))
		_, excluded := inv.ExcludedTags[op.Tag]
		_, unserved := inv.Unserved[op.key()]
		switch {
		case got == "" && !excluded && !unserved:
			t.Errorf("%s is not served (the router answers 404 or 405)", op.key())
		case got != "" && pathShape(got) != pathShape(op.Path):
			t.Errorf("%s reaches %s instead: a parameter takes a literal segment of the reference's path", op.key(), got)
		case got != "" && (excluded || unserved):
			t.Errorf("%s is served now: remove it from the inventory's unserved list (or its tag from excludedTags)", op.key())
		case got != "":
			served++
		}
	}
	for k := range inv.Unserved {
		if !inventoryHas(inv, k) {
			t.Errorf("unserved entry %q names no operation of the inventory", k)
		}
	}
	t.Logf("%d of %d reference operations served", served, len(inv.Operations))
}

// TestEveryReferenceRequestFieldIsRead compares each served operation's
// query parameters and JSON body fields with the ones Berth's handler
// binds (its request type, as its OpenAPI document describes it, which
// openapi_coverage_test.go checks against the handler's source). A field
// Berth does not read must be listed in the inventory's unread map, with
// the reason; the test prints the list.
func TestEveryReferenceRequestFieldIsRead(t *testing.T) {
	inv := loadReferenceInventory(t)
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	body, err := json.Marshal(buildOpenAPI((&Server{}).routes(), apiOps))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	ours := map[string]json.RawMessage{} // "METHOD shape" → operation
	for p, methods := range doc.Paths {
		for m, op := range methods {
			ours[strings.ToUpper(m)+" "+pathShape(p)] = op
		}
	}
	listed := map[string]bool{}
	var unread []string
	for _, op := range inv.Operations {
		if _, ok := inv.ExcludedTags[op.Tag]; ok {
			continue
		}
		raw, ok := ours[op.Method+" "+pathShape(op.Path)]
		if !ok {
			continue // TestEveryReferenceOperationIsServed reports it
		}
		query, fields, open := requestFields(t, raw, doc.Components.Schemas)
		check := func(kind, name string, read bool) {
			k := op.key() + " " + kind + "." + name
			if _, ok := inv.Unread[k]; ok {
				listed[k] = true
				if read {
					t.Errorf("%s is read now: remove it from the inventory's unread list", k)
				}
				return
			}
			if !read {
				unread = append(unread, k)
			}
		}
		for _, q := range op.Query {
			check("query", q, query[q])
		}
		// The handlers bind with encoding/json, which matches a body's
		// field names to their json tags case-insensitively ("Memory" is
		// read as "memory").
		folded := map[string]bool{}
		for f := range fields {
			folded[strings.ToLower(f)] = true
		}
		for _, f := range op.Body {
			check("body", f, fields[f] || folded[strings.ToLower(f)] || open)
		}
	}
	sort.Strings(unread)
	for _, k := range unread {
		t.Errorf("%s: Berth's handler does not read it (read it, or list it in testdata/reference-operations.json unread with the reason)", k)
	}
	for k := range inv.Unread {
		if !listed[k] {
			t.Errorf("unread entry %q names no field of a served operation", k)
		}
	}
}

// requestFields are the query parameters and the JSON body's top-level
// fields of one operation of Berth's document; open is true when the body is
// a free-form object (a map the handler reads key by key).
func requestFields(t *testing.T, raw json.RawMessage, schemas map[string]json.RawMessage) (query, fields map[string]bool, open bool) {
	t.Helper()
	var op struct {
		Parameters []struct {
			Name string `json:"name"`
			In   string `json:"in"`
		} `json:"parameters"`
		RequestBody *struct {
			Content map[string]struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"content"`
		} `json:"requestBody"`
	}
	if err := json.Unmarshal(raw, &op); err != nil {
		t.Fatal(err)
	}
	query, fields = map[string]bool{}, map[string]bool{}
	for _, p := range op.Parameters {
		if p.In == "query" {
			query[p.Name] = true
		}
	}
	if op.RequestBody == nil {
		return query, fields, false
	}
	for _, c := range op.RequestBody.Content {
		if schemaFields(t, c.Schema, schemas, fields, 0) {
			open = true
		}
	}
	return query, fields, open
}

// schemaFields adds the properties of schema (following $ref, allOf,
// oneOf and anyOf) to fields and says whether it admits any field.
func schemaFields(t *testing.T, raw json.RawMessage, schemas map[string]json.RawMessage, fields map[string]bool, depth int) bool {
	t.Helper()
	if len(raw) == 0 || depth > 8 {
		return false
	}
	var s struct {
		Ref                  string                     `json:"$ref"`
		Properties           map[string]json.RawMessage `json:"properties"`
		AdditionalProperties json.RawMessage            `json:"additionalProperties"`
		AllOf                []json.RawMessage          `json:"allOf"`
		OneOf                []json.RawMessage          `json:"oneOf"`
		AnyOf                []json.RawMessage          `json:"anyOf"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return false
	}
	open := false
	if s.Ref != "" {
		open = schemaFields(t, schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")], schemas, fields, depth+1)
	}
	for name := range s.Properties {
		fields[name] = true
	}
	if len(s.AdditionalProperties) > 0 && string(s.AdditionalProperties) != "false" && len(s.Properties) == 0 {
		open = true
	}
	for _, group := range [][]json.RawMessage{s.AllOf, s.OneOf, s.AnyOf} {
		for _, sub := range group {
			if schemaFields(t, sub, schemas, fields, depth+1) {
				open = true
			}
		}
	}
	return open
}

// inventoryHas reports whether "METHOD /path" is an operation of inv.
func inventoryHas(inv referenceInventory, key string) bool {
	for _, op := range inv.Operations {
		if op.key() == key {
			return true
		}
	}
	return false
}
