package api

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// generatedDoc is the document of the real route table, as served.
func generatedDoc(t *testing.T) []byte {
	t.Helper()
	body, err := json.Marshal(buildOpenAPI((&Server{}).routes(), apiOps))
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func TestOpenAPIDocumentIsValidOpenAPI31(t *testing.T) {
	body := generatedDoc(t)
	doc, err := libopenapi.NewDocument(body)
	if err != nil {
		t.Fatal(err)
	}
	if v := doc.GetSpecInfo().Version; v != "3.1.0" {
		t.Fatalf("document version %q, want 3.1.0", v)
	}
	if _, err := doc.BuildV3Model(); err != nil {
		t.Fatalf("building the model: %v", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	ok, verrs := v.ValidateDocument()
	for _, e := range verrs {
		t.Errorf("invalid: %s: %s", e.Message, e.Reason)
		for _, se := range e.SchemaValidationErrors {
			t.Errorf("  at %s: %s", se.FieldPath, se.Reason)
		}
	}
	if !ok {
		t.Fatal("the document does not validate against the OpenAPI 3.1 schema")
	}
}

// operation is the part of an operation the tests read.
type operation struct {
	OperationID string            `json:"operationId"`
	Tags        []string          `json:"tags"`
	Permission  string            `json:"x-berth-permission"`
	Audit       string            `json:"x-berth-audit"`
	Security    *[]map[string]any `json:"security"`
	Parameters  []struct {
		Name     string `json:"name"`
		In       string `json:"in"`
		Required bool   `json:"required"`
	} `json:"parameters"`
	RequestBody *json.RawMessage          `json:"requestBody"`
	Responses   map[string]map[string]any `json:"responses"`
}

func parsedPaths(t *testing.T, body []byte) map[string]map[string]operation {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]operation `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Paths
}

func TestOpenAPIDescribesEveryRouteOfTheTable(t *testing.T) {
	table := (&Server{}).routes()
	paths := parsedPaths(t, generatedDoc(t))

	want := map[string]route{}
	for _, rt := range table {
		want[rt.Method+" "+rt.Path] = rt
	}
	got := map[string]operation{}
	for p, ops := range paths {
		for m, op := range ops {
			got[strings.ToUpper(m)+" "+p] = op
		}
	}
	var missing, extra []string
	for k := range want {
		if _, ok := got[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Fatalf("routes missing from the document: %v\noperations not in the table: %v", missing, extra)
	}
	if len(got) != len(table) {
		t.Fatalf("%d operations for %d routes", len(got), len(table))
	}

	ids := map[string]string{}
	for k, rt := range want {
		op := got[k]
		if prev, dup := ids[op.OperationID]; dup {
			t.Errorf("operationId %q of %s is also %s's", op.OperationID, k, prev)
		}
		ids[op.OperationID] = k
		if op.Permission != string(rt.Perm) {
			t.Errorf("%s: x-berth-permission %q, want %q", k, op.Permission, rt.Perm)
		}
		if op.Audit != rt.Audit {
			t.Errorf("%s: x-berth-audit %q, want %q", k, op.Audit, rt.Audit)
		}
		if tag := strings.SplitN(strings.TrimPrefix(strings.TrimPrefix(rt.Path, "/api"), "/"), "/", 2)[0]; !slices.Equal(op.Tags, []string{tag}) {
			t.Errorf("%s: tags %v, want [%s]", k, op.Tags, tag)
		}
		// Public routes drop the document's security; the others keep it.
		if public := op.Security != nil && len(*op.Security) == 0; public != (rt.Perm == Public) {
			t.Errorf("%s: public in the document %v, in the table %v", k, public, rt.Perm == Public)
		}
		params := map[string]bool{}
		for _, p := range op.Parameters {
			params[p.In+":"+p.Name] = true
			if p.In == "path" && !p.Required {
				t.Errorf("%s: path parameter %s not required", k, p.Name)
			}
		}
		for _, name := range pathParams(rt.Path) {
			if !params["path:"+name] {
				t.Errorf("%s: path parameter %s not described", k, name)
			}
		}
		switch rt.Env {
		case EnvQuery:
			if !params["query:env"] {
				t.Errorf("%s: no env query parameter", k)
			}
		case EnvIDQuery:
			if !params["query:envId"] {
				t.Errorf("%s: no envId query parameter", k)
			}
		}
		if len(op.Responses) == 0 {
			t.Errorf("%s: no responses", k)
		}
		if _, ok := op.Responses["500"]; !ok {
			t.Errorf("%s: no error response", k)
		}
		if _, ok := op.Responses["401"]; ok == (rt.Perm == Public) {
			t.Errorf("%s: 401 described %v for permission %q", k, ok, rt.Perm)
		}
	}
}

func TestOpenAPIRegistryNamesRealRoutes(t *testing.T) {
	table := map[string]bool{}
	for _, rt := range (&Server{}).routes() {
		table[rt.Method+" "+rt.Path] = true
	}
	for k := range apiOps {
		if !table[k] {
			t.Errorf("apiOps describes %q, which the route table lacks", k)
		}
	}
}

// A route added to the table appears in the document without a word in
// the registry, with a generic JSON answer and the error answers.
func TestOpenAPIDescribesAnUnregisteredRoute(t *testing.T) {
	rt := route{Method: "POST", Path: "/api/widgets/{widgetId}/polish", Perm: "widgets:edit", Env: EnvQuery, Audit: "widget.polish"}
	body, err := json.Marshal(buildOpenAPI([]route{rt}, nil))
	if err != nil {
		t.Fatal(err)
	}
	op, ok := parsedPaths(t, body)["/api/widgets/{widgetId}/polish"]["post"]
	if !ok {
		t.Fatalf("no operation in %s", body)
	}
	if op.Permission != "widgets:edit" || op.Audit != "widget.polish" || !slices.Equal(op.Tags, []string{"widgets"}) {
		t.Errorf("operation %+v", op)
	}
	for _, status := range []string{"200", "400", "401", "403", "404", "500"} {
		if _, ok := op.Responses[status]; !ok {
			t.Errorf("no %s response in %v", status, op.Responses)
		}
	}
	if op.RequestBody != nil {
		t.Errorf("a request body was invented: %s", *op.RequestBody)
	}
	var names []string
	for _, p := range op.Parameters {
		names = append(names, p.In+":"+p.Name)
	}
	if !slices.Equal(names, []string{"path:widgetId", "query:env"}) {
		t.Errorf("parameters %v", names)
	}
}

// The registry's types reach the document as schemas of the wire form.
func TestOpenAPISchemasFollowTheWireTypes(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Type       any                        `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(generatedDoc(t), &doc); err != nil {
		t.Fatal(err)
	}
	user, ok := doc.Components.Schemas["api.userJSON"]
	if !ok {
		t.Fatalf("no api.userJSON schema")
	}
	for _, f := range []string{"id", "username", "isAdmin", "createdAt", "lastLogin"} {
		if _, ok := user.Properties[f]; !ok {
			t.Errorf("userJSON lacks %s", f)
		}
	}
	if !slices.Contains(user.Required, "username") {
		t.Errorf("username not required in %v", user.Required)
	}
	if string(user.Properties["createdAt"]) != `{"format":"date-time","type":"string"}` {
		t.Errorf("createdAt: %s", user.Properties["createdAt"])
	}
	// Requests require nothing (absent fields are accepted).
	if req, ok := doc.Components.Schemas["api.environmentRequest"]; !ok || len(req.Required) > 0 {
		t.Errorf("environmentRequest: %+v (present %v)", req, ok)
	}
	env := doc.Components.Schemas["api.environmentJSON"]
	if slices.Contains(env.Required, "tlsKey") || !slices.Contains(env.Required, "name") {
		t.Errorf("environmentJSON required %v: omitempty tlsKey must be optional, name required", env.Required)
	}
	if !strings.Contains(string(doc.Paths["/api/containers/{id}/logs/stream"]["get"]), "text/event-stream") {
		t.Errorf("the log stream is not described as an event stream")
	}
}
