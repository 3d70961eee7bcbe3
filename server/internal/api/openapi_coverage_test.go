package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"mime"
	"os"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/openapi"
)

// The tests of this file read the handlers' source: what a handler does
// (binds a body, reads a query parameter, sets a Content-Type, upgrades to a
// WebSocket), found by following the calls it makes inside this package,
// must be what the document says of its route. A route whose registry
// entry is missing, untyped or wrong fails them.

// handlerFacts is what the source says a handler does.
type handlerFacts struct {
	body      bool            // reads the request body
	multipart bool            // as a multipart form
	media     map[string]bool // non-JSON media types it sets on its answer
	websocket bool            // upgrades to a WebSocket
	query     map[string]bool // query parameters it reads
	literals  map[string]bool // every string literal of its source
}

// sourceIndex is the package's functions by key: "Type.method" or "func".
type sourceIndex struct {
	funcs   map[string]*ast.FuncDecl
	methods map[string][]string // method name → keys of the methods so named
	consts  map[string]string   // string constants of the package
	memo    map[string]*handlerFacts
}

func loadSource(t *testing.T) *sourceIndex {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	idx := &sourceIndex{funcs: map[string]*ast.FuncDecl{}, methods: map[string][]string{},
		consts: map[string]string{}, memo: map[string]*handlerFacts{}}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				key := d.Name.Name
				if d.Recv != nil && len(d.Recv.List) == 1 {
					key = recvTypeName(d.Recv.List[0].Type) + "." + d.Name.Name
					idx.methods[d.Name.Name] = append(idx.methods[d.Name.Name], key)
				}
				idx.funcs[key] = d
			case *ast.GenDecl:
				if d.Tok != token.CONST {
					continue
				}
				for _, sp := range d.Specs {
					vs := sp.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								idx.consts[n.Name], _ = strconv.Unquote(lit.Value)
							}
						}
					}
				}
			}
		}
	}
	return idx
}

func recvTypeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvTypeName(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.IndexExpr:
		return recvTypeName(e.X)
	}
	return ""
}

// handlerKey turns a handler's runtime name into its source key:
// "…/api.(*Server).listUsers-fm" → "Server.listUsers";
// "…/api.(*Server).routes.(*Server).stackAction.func1" → "Server.stackAction".
func handlerKey(h handler) string {
	name := runtime.FuncForPC(reflect.ValueOf(h).Pointer()).Name()
	name = name[strings.LastIndex(name, "/")+1:]
	name = strings.TrimSuffix(name, "-fm")
	parts := strings.Split(name, ".")
	for len(parts) > 0 && (strings.HasPrefix(parts[len(parts)-1], "func") || strings.HasPrefix(parts[len(parts)-1], "gowrap")) {
		parts = parts[:len(parts)-1]
	}
	if len(parts) < 2 {
		return name
	}
	last, prev := parts[len(parts)-1], parts[len(parts)-2]
	if strings.HasPrefix(prev, "(") {
		return strings.Trim(prev, "(*)") + "." + last
	}
	return last
}

// stringArg is the value of a string literal or constant argument.
func (idx *sourceIndex) stringArg(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			s, err := strconv.Unquote(e.Value)
			return s, err == nil
		}
	case *ast.Ident:
		s, ok := idx.consts[e.Name]
		return s, ok
	}
	return "", false
}

// facts are what key's function does, with what the functions it refers to do.
func (idx *sourceIndex) facts(key string) *handlerFacts {
	if f, ok := idx.memo[key]; ok {
		return f
	}
	f := &handlerFacts{media: map[string]bool{}, query: map[string]bool{}, literals: map[string]bool{}}
	idx.memo[key] = f // cycles end here
	fd := idx.funcs[key]
	if fd == nil || fd.Body == nil {
		return f
	}
	recvName, recvType := "", ""
	if fd.Recv != nil && len(fd.Recv.List[0].Names) == 1 {
		recvName, recvType = fd.Recv.List[0].Names[0].Name, recvTypeName(fd.Recv.List[0].Type)
	}
	queryVars := map[string]bool{} // variables holding a url.Values of the request
	var callees []string
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, rhs := range n.Rhs {
				if call, ok := rhs.(*ast.CallExpr); ok && len(call.Args) == 0 && i < len(n.Lhs) {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Query" {
						if id, ok := n.Lhs[i].(*ast.Ident); ok {
							queryVars[id.Name] = true
						}
					}
				}
			}
		case *ast.BasicLit:
			if v, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING {
				f.literals[v] = true
			}
		case *ast.IndexExpr:
			if id, ok := n.X.(*ast.Ident); ok && queryVars[id.Name] {
				if s, ok := idx.stringArg(n.Index); ok {
					f.query[s] = true
				}
			}
		case *ast.Ident:
			if _, ok := idx.funcs[n.Name]; ok {
				callees = append(callees, n.Name)
			}
		case *ast.SelectorExpr:
			if req, ok := n.X.(*ast.SelectorExpr); ok && req.Sel.Name == "Request" && n.Sel.Name == "Body" {
				f.body = true
			}
			if pkg, ok := n.X.(*ast.Ident); ok && pkg.Name == "websocket" && n.Sel.Name == "Accept" {
				f.websocket = true
			}
			if id, ok := n.X.(*ast.Ident); ok && id.Name == recvName {
				if _, ok := idx.funcs[recvType+"."+n.Sel.Name]; ok {
					callees = append(callees, recvType+"."+n.Sel.Name)
				}
			} else if keys := idx.methods[n.Sel.Name]; len(keys) == 1 {
				callees = append(callees, keys[0])
			}
			return true
		case *ast.CallExpr:
			idx.callFacts(n, f, queryVars)
		}
		return true
	})
	for _, k := range callees {
		// The route table refers to every handler: not a call of them.
		if k == key || k == "Server.routes" || strings.HasSuffix(k, "Routes") {
			continue
		}
		g := idx.facts(k)
		f.body = f.body || g.body
		f.multipart = f.multipart || g.multipart
		f.websocket = f.websocket || g.websocket
		for m := range g.media {
			f.media[m] = true
		}
		for q := range g.query {
			f.query[q] = true
		}
		for l := range g.literals {
			f.literals[l] = true
		}
	}
	return f
}

// callFacts notes what one call says: a query parameter read, a media type set.
func (idx *sourceIndex) callFacts(call *ast.CallExpr, f *handlerFacts, queryVars map[string]bool) {
	arg := func(i int) (string, bool) {
		if i >= len(call.Args) {
			return "", false
		}
		return idx.stringArg(call.Args[i])
	}
	addMedia := func(s string) {
		if mt, _, err := mime.ParseMediaType(s); err == nil && mt != mediaJSON {
			f.media[mt] = true
		}
	}
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		switch fn.Name {
		case "queryBool", "queryInt":
			if s, ok := arg(1); ok {
				f.query[s] = true
			}
		}
	case *ast.SelectorExpr:
		switch fn.Sel.Name {
		case "Query", "DefaultQuery", "GetQuery", "QueryArray", "GetQueryArray", "QueryMap":
			if s, ok := arg(0); ok {
				f.query[s] = true
			}
		case "Get", "Has":
			if id, ok := fn.X.(*ast.Ident); ok && queryVars[id.Name] {
				if s, ok := arg(0); ok {
					f.query[s] = true
				}
			}
		case "Header":
			if k, ok := arg(0); ok && strings.EqualFold(k, "Content-Type") {
				if v, ok := arg(1); ok {
					addMedia(v)
				}
			}
		case "Data":
			if v, ok := arg(1); ok {
				addMedia(v)
			}
		case "DataFromReader":
			if v, ok := arg(2); ok {
				addMedia(v)
			}
		case "MultipartReader", "FormFile", "MultipartForm", "ParseMultipartForm", "PostForm":
			f.body, f.multipart = true, true
		case "ShouldBindJSON", "BindJSON", "ShouldBind", "GetRawData":
			f.body = true
		}
	}
}

// successContent is the media types of an operation's success answer and
// the JSON schema among them (nil when there is none).
func successContent(op map[string]any) (media []string, jsonSchema map[string]any, status string) {
	responses, _ := op["responses"].(map[string]any)
	for code, r := range responses {
		if !strings.HasPrefix(code, "1") && !strings.HasPrefix(code, "2") && !strings.HasPrefix(code, "3") {
			continue
		}
		status = code
		content, _ := r.(map[string]any)["content"].(map[string]any)
		for m, c := range content {
			media = append(media, m)
			if m == mediaJSON {
				jsonSchema, _ = c.(map[string]any)["schema"].(map[string]any)
			}
		}
	}
	sort.Strings(media)
	return media, jsonSchema, status
}

// typedSchema reports whether s says something of its value: not {} (any
// JSON), not a reference to an empty component.
func typedSchema(s map[string]any, components map[string]any) bool {
	if len(s) == 0 {
		return false
	}
	if ref, ok := s["$ref"].(string); ok {
		c, _ := components[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		return len(c) > 0
	}
	if items, ok := s["items"].(map[string]any); ok {
		return typedSchema(items, components)
	}
	if ao, ok := s["anyOf"].([]any); ok {
		for _, x := range ao {
			if xs, _ := x.(map[string]any); typedSchema(xs, components) {
				return true
			}
		}
		return false
	}
	return true
}

// TestOpenAPIEveryRouteIsTyped: no route falls back to the generic
// answer, and what the document says of each route's body, answer, media
// types and query parameters is what its handler does.
func TestOpenAPIEveryRouteIsTyped(t *testing.T) {
	doc := buildOpenAPI((&Server{}).routes(), apiOps)
	paths := doc["paths"].(map[string]map[string]any)
	components := doc["components"].(map[string]any)["schemas"].(map[string]openapi.Schema)
	comps := map[string]any{}
	for k, v := range components {
		comps[k] = map[string]any(v)
	}
	idx := loadSource(t)
	typed := 0
	for _, rt := range (&Server{}).routes() {
		k := rt.Method + " " + rt.Path
		op, registered := apiOps[k]
		if !registered {
			t.Errorf("%s: not in apiOps (the document falls back to a generic answer)", k)
			continue
		}
		hkey := handlerKey(rt.h)
		if idx.funcs[hkey] == nil {
			t.Errorf("%s: handler %s not found in the source", k, hkey)
			continue
		}
		facts := idx.facts(hkey)
		docOp := paths[rt.Path][strings.ToLower(rt.Method)].(map[string]any)
		ok := true
		fail := func(format string, args ...any) {
			ok = false
			t.Errorf(k+" ("+hkey+"): "+format, args...)
		}

		// The request body.
		rb, hasBody := docOp["requestBody"].(map[string]any)
		switch {
		case facts.body && !hasBody && !op.IgnoresBody:
			fail("the handler reads a body; no request body described")
		case !facts.body && hasBody:
			fail("a request body is described; the handler reads none")
		case hasBody:
			content := rb["content"].(map[string]any)
			want := mediaJSON
			if facts.multipart {
				want = mediaMultipart
			}
			c, ok := content[want].(map[string]any)
			if !ok || (len(content) != 1 && op.RequestContent == "") {
				fail("request body as %v, want %s", keys(content), want)
			} else if s, _ := c["schema"].(map[string]any); want == mediaJSON && !typedSchema(s, comps) {
				fail("request body schema %v says nothing", s)
			}
		}

		// The answer.
		media, jsonSchema, _ := successContent(docOp)
		if facts.websocket {
			if op.Content != mediaWebSocket || docOp["x-berth-websocket"] != true {
				fail("the handler upgrades to a WebSocket; the document does not say so")
			}
		} else if op.Content == mediaWebSocket {
			fail("described as a WebSocket; the handler does not upgrade")
		}
		for m := range facts.media {
			if !hasMedia(media, m) {
				fail("the handler answers %s; the document says %v", m, media)
			}
		}
		for _, m := range media {
			if m != mediaJSON && !op.Delegated && !facts.media[m] {
				fail("the document says %s; the handler sets no such Content-Type", m)
			}
		}
		if len(facts.media) > 0 && hasMedia(media, mediaJSON) && !op.AlsoJSON {
			fail("a stream (%v) also labelled JSON without AlsoJSON", keys(facts.media))
		}
		if hasMedia(media, mediaJSON) && !typedSchema(jsonSchema, comps) {
			fail("JSON answer without a typed schema: %v", jsonSchema)
		}
		if !facts.websocket && len(media) == 0 && op.Status != 302 {
			fail("no success content described")
		}

		// Query parameters.
		described := map[string]bool{}
		for _, q := range op.Query {
			described[q.Name] = true
		}
		switch rt.Env {
		case EnvQuery, AnyEnv:
			described["env"] = true
		case EnvIDQuery:
			described["envId"] = true
		}
		for q := range facts.query {
			if !described[q] {
				fail("the handler reads query parameter %q; not described", q)
			}
		}
		// Names read through a helper's parameter are in the source as
		// literals at least.
		for _, q := range op.Query {
			if !facts.query[q.Name] && !facts.literals[q.Name] {
				fail("query parameter %q described; the handler does not read it", q.Name)
			}
		}
		if ok {
			typed++
		}
	}
	t.Logf("%d of %d routes typed", typed, len((&Server{}).routes()))
}

func TestOpenAPIOpGroupsDoNotOverlap(t *testing.T) {
	seen := map[string]int{}
	for i, g := range opGroups {
		for k := range g {
			if j, dup := seen[k]; dup {
				t.Errorf("%s is in op groups %d and %d", k, j, i)
			}
			seen[k] = i
		}
	}
}

func hasMedia(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The analysis itself finds what it must: a handler that binds JSON, one
// that streams events, one that reads a multipart upload, one that upgrades.
func TestOpenAPIHandlerAnalysisSeesBodiesAndStreams(t *testing.T) {
	idx := loadSource(t)
	byPath := map[string]route{}
	for _, rt := range (&Server{}).routes() {
		byPath[rt.Method+" "+rt.Path] = rt
	}
	facts := func(k string) *handlerFacts {
		rt, ok := byPath[k]
		if !ok {
			t.Fatalf("no route %s", k)
		}
		return idx.facts(handlerKey(rt.h))
	}
	if f := facts("POST /api/volumes"); !f.body || len(f.media) > 0 || f.websocket {
		t.Errorf("POST /api/volumes: %+v", f)
	}
	if f := facts("GET /api/volumes"); f.body {
		t.Errorf("GET /api/volumes reads no body: %+v", f)
	}
	if f := facts("GET /api/containers/{id}/logs/stream"); !f.media[mediaSSE] {
		t.Errorf("log stream: %+v", f)
	}
	if f := facts("POST /api/containers/{id}/files/upload"); !f.multipart {
		t.Errorf("upload: %+v", f)
	}
	if f := facts("GET /api/containers/exec/{execId}/attach"); !f.websocket {
		t.Errorf("attach: %+v", f)
	}
	if f := facts("GET /api/volumes/{name}/export"); !f.media["application/x-tar"] {
		t.Errorf("volume export: %+v", f)
	}
	if f := facts("GET /api/containers"); !f.query["all"] {
		t.Errorf("GET /api/containers reads all: %+v", f)
	}
}
