package api

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/berth-dev/berth/server/internal/openapi"
	"github.com/berth-dev/berth/shared/version"
)

// The served API description (issue 15) is generated from THE route table
// and the body types registered in openapi_types.go, once per process: a
// route added anywhere in the table appears in it without further work.

// apiOp says what the route table cannot: the body types of a route and the
// form of its answer.
type apiOp struct {
	Summary string
	Request any // a value of the type the handler binds (nil: no body described)
	// RequestContent is the request body's media type when it is not JSON
	// ("multipart/form-data": Request's fields are the form's parts).
	RequestContent string
	Response       any // a value of the type it answers with (nil: generic JSON)
	Status         int // success status (0: 200)
	// Content is the success answer's media type when it is not only JSON:
	// "text/event-stream", "application/x-tar", a WebSocket ("websocket"), …;
	// several, comma-separated, when the handler picks one (export formats).
	Content string
	// Delegated marks an answer written by another package's handler (the
	// Prometheus exposition, the console's files, an image of its own
	// type), which sets the media type itself.
	Delegated bool
	// Header names a response header the success answer carries (X-Job-Id).
	Header string
	// AlsoJSON marks a stream that answers JSON (Response) instead when the
	// client asks for it (Accept: application/json).
	AlsoJSON bool
	Query    []queryParam
	// IgnoresBody marks a route whose handler, shared with another method
	// of the path, binds a body only on that other method.
	IgnoresBody bool
}

// queryParam is a query parameter beyond the environment selector.
type queryParam struct {
	Name, Type, Description string
}

// Media types of apiOp.Content.
const (
	mediaSSE       = "text/event-stream"
	mediaWebSocket = "websocket"
	mediaJSON      = "application/json"
	mediaTar       = "application/x-tar"
	mediaMultipart = "multipart/form-data"
)

var openAPIDoc struct {
	once sync.Once
	body []byte
	err  error
}

// openAPIJSON returns the document, generated on first use.
func (s *Server) openAPIJSON() ([]byte, error) {
	openAPIDoc.once.Do(func() {
		openAPIDoc.body, openAPIDoc.err = json.Marshal(buildOpenAPI(s.routes(), apiOps))
	})
	return openAPIDoc.body, openAPIDoc.err
}

// buildOpenAPI describes routes as an OpenAPI 3.1 document.
func buildOpenAPI(routes []route, ops map[string]apiOp) map[string]any {
	r := openapi.NewReflector(openAPIOverrides)
	errSchema := r.Of(errorBody{}, openapi.Response)
	paths := map[string]map[string]any{}
	tags := map[string]bool{}
	for _, rt := range routes {
		op := ops[rt.Method+" "+rt.Path]
		tag := routeTag(rt.Path)
		tags[tag] = true
		o := map[string]any{
			"operationId":         operationID(rt),
			"tags":                []string{tag},
			"summary":             summaryOf(rt, op),
			"x-berth-permission":  string(rt.Perm),
			"x-berth-environment": envSelectorName(rt.Env),
		}
		if rt.Audit != "" {
			o["x-berth-audit"] = rt.Audit
		}
		if rt.Setup {
			o["x-berth-setup"] = true
		}
		if rt.Perm == Public {
			o["security"] = []any{} // no sign-in
		}
		if params := parameters(rt, op); len(params) > 0 {
			o["parameters"] = params
		}
		if op.Request != nil {
			o["requestBody"] = requestBody(r, op)
		}
		if op.Content == mediaWebSocket {
			o["x-berth-websocket"] = true
		}
		o["responses"] = responses(r, rt, op)
		if paths[rt.Path] == nil {
			paths[rt.Path] = map[string]any{}
		}
		paths[rt.Path][strings.ToLower(rt.Method)] = o
	}
	tagList := make([]string, 0, len(tags))
	for t := range tags {
		tagList = append(tagList, t)
	}
	sort.Strings(tagList)
	tagObjs := make([]map[string]any, 0, len(tagList))
	for _, t := range tagList {
		tagObjs = append(tagObjs, map[string]any{"name": t})
	}
	r.Components["Error"] = errSchema
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "Berth API",
			"version": version.Version,
			"description": "Every route of Berth, generated from its route table.\n\n" +
				"Sign in with the session cookie the console uses (`" + SessionCookie + "`, set by POST /api/auth/login) " +
				"or present an API token (POST /api/auth/tokens) as `Authorization: Bearer <token>`.\n\n" +
				"Extensions: `x-berth-permission` is the permission a route requires (`public`: none; `authenticated`: " +
				"any signed-in user; `<resource>:<action>`: checked against the route's environment); " +
				"`x-berth-environment` says how the route names its environment (`env` or `envId` query parameter, " +
				"the `{id}` path parameter, `any` for lists across environments, `none`); `x-berth-audit` is the action " +
				"recorded in the audit log after a successful change (`-`: a change the route records itself or not at all); " +
				"`x-berth-setup` marks a route open while no user exists, to the holder of the setup token.",
		},
		"servers":  []any{map[string]any{"url": "/"}},
		"tags":     tagObjs,
		"paths":    paths,
		"security": []any{map[string]any{"session": []string{}}, map[string]any{"apiToken": []string{}}},
		"components": map[string]any{
			"schemas": r.Components,
			"securitySchemes": map[string]any{
				"session":  map[string]any{"type": "apiKey", "in": "cookie", "name": SessionCookie, "description": "The console's session cookie."},
				"apiToken": map[string]any{"type": "http", "scheme": "bearer", "description": "An API token (POST /api/auth/tokens)."},
			},
			"responses": map[string]any{
				"Error": map[string]any{
					"description": "Error: `{error, details?}`",
					"content":     map[string]any{mediaJSON: map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}},
				},
			},
		},
	}
}

// requestBody describes op's request: JSON of op.Request, or each media
// type of op.RequestContent (a multipart form's parts are op.Request's
// fields; other media are the bytes themselves).
func requestBody(r *openapi.Reflector, op apiOp) map[string]any {
	if op.RequestContent == "" {
		return map[string]any{"required": false,
			"content": map[string]any{mediaJSON: map[string]any{"schema": r.Of(op.Request, openapi.Request)}}}
	}
	content := map[string]any{}
	for _, m := range strings.Split(op.RequestContent, ",") {
		m = strings.TrimSpace(m)
		switch {
		case m == mediaJSON || m == mediaMultipart:
			content[m] = map[string]any{"schema": r.Of(op.Request, openapi.Request)}
		default:
			content[m] = map[string]any{"schema": streamSchema(m)}
		}
	}
	return map[string]any{"required": true, "content": content}
}

// routeTag is the first path segment after /api (or the first segment of
// a path outside /api: /metrics).
func routeTag(p string) string {
	seg, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(p, "/api"), "/"), "/")
	return seg
}

// operationID is unique per method and path: "get_api_containers_id_logs".
func operationID(rt route) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(rt.Method))
	for _, part := range strings.Split(rt.Path, "/") {
		part = strings.Trim(part, "{}")
		if part == "" {
			continue
		}
		b.WriteByte('_')
		for _, ch := range part {
			if ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' {
				b.WriteRune(ch)
			} else {
				b.WriteByte('_')
			}
		}
	}
	return b.String()
}

func summaryOf(rt route, op apiOp) string {
	if op.Summary != "" {
		return op.Summary
	}
	return rt.Method + " " + rt.Path
}

func envSelectorName(sel Selector) string {
	switch sel {
	case EnvQuery:
		return "env"
	case EnvIDQuery:
		return "envId"
	case EnvPath:
		return "path"
	case AnyEnv:
		return "any"
	}
	return "none"
}

// pathParams are the names of the {x} segments of p.
func pathParams(p string) []string {
	var out []string
	for _, part := range strings.Split(p, "/") {
		if strings.HasPrefix(part, "{") && strings.HasSuffix(part, "}") {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(part, "{"), "}"))
		}
	}
	return out
}

func parameters(rt route, op apiOp) []any {
	var out []any
	for _, name := range pathParams(rt.Path) {
		p := map[string]any{"name": name, "in": "path", "required": true, "schema": map[string]any{"type": "string"}}
		if rt.Env == EnvPath && name == "id" {
			p["description"] = "The environment's id."
			p["schema"] = map[string]any{"type": "integer", "format": "int64"}
		}
		out = append(out, p)
	}
	switch rt.Env {
	case EnvQuery:
		out = append(out, map[string]any{"name": "env", "in": "query", "required": false,
			"description": "The environment's id (default 1).", "schema": map[string]any{"type": "integer", "format": "int64"}})
	case EnvIDQuery:
		out = append(out, map[string]any{"name": "envId", "in": "query", "required": false,
			"description": "The environment's id (default 1).", "schema": map[string]any{"type": "integer", "format": "int64"}})
	case AnyEnv:
		if !hasQuery(op, "env") {
			out = append(out, map[string]any{"name": "env", "in": "query", "required": false,
				"description": "Only this environment (default: every environment the caller may reach).",
				"schema":      map[string]any{"type": "integer", "format": "int64"}})
		}
	}
	for _, q := range op.Query {
		typ := q.Type
		if typ == "" {
			typ = "string"
		}
		out = append(out, map[string]any{"name": q.Name, "in": "query", "required": false,
			"description": q.Description, "schema": map[string]any{"type": typ}})
	}
	return out
}

func hasQuery(op apiOp, name string) bool {
	for _, q := range op.Query {
		if q.Name == name {
			return true
		}
	}
	return false
}

func responses(r *openapi.Reflector, rt route, op apiOp) map[string]any {
	errRef := map[string]any{"$ref": "#/components/responses/Error"}
	out := map[string]any{}
	status := op.Status
	if status == 0 {
		status = http.StatusOK
	}
	jsonSchema := map[string]any{}
	if alts, ok := op.Response.(anyOf); ok {
		var schemas []any
		for _, a := range alts {
			schemas = append(schemas, r.Of(a, openapi.Response))
		}
		jsonSchema = map[string]any{"anyOf": schemas}
	} else if op.Response != nil {
		jsonSchema = r.Of(op.Response, openapi.Response)
	}
	switch {
	case op.Content == "" && status >= 300 && status < 400:
		out[strconv.Itoa(status)] = map[string]any{"description": "A redirect to the Location header's address.",
			"headers": map[string]any{"Location": map[string]any{"schema": map[string]any{"type": "string"}}}}
	case op.Content == "":
		desc := "Success."
		if op.Response == nil {
			desc = "Success: JSON (its shape is not described yet)."
		}
		out[strconv.Itoa(status)] = map[string]any{"description": desc,
			"content": map[string]any{mediaJSON: map[string]any{"schema": jsonSchema}}}
	case op.Content == mediaWebSocket:
		out["101"] = map[string]any{"description": "Switching Protocols: a WebSocket (send `Upgrade: websocket`)."}
	default:
		content := map[string]any{}
		var desc string
		for _, m := range strings.Split(op.Content, ",") {
			m = strings.TrimSpace(m)
			content[m] = map[string]any{"schema": streamSchema(m)}
			if desc != "" {
				desc += " "
			}
			switch {
			case m == mediaSSE:
				desc += "Server-Sent Events: `event: <name>` lines with JSON `data`."
			case strings.HasPrefix(m, "text/"):
				desc += "A document (" + m + ")."
			default:
				desc += "A stream (" + m + ")."
			}
		}
		if op.AlsoJSON {
			content[mediaJSON] = map[string]any{"schema": jsonSchema}
			desc += " With `Accept: application/json` (or the query asking for JSON), one JSON answer instead."
		}
		out[strconv.Itoa(status)] = map[string]any{"description": desc, "content": content}
	}
	if op.Header != "" {
		if ok, _ := out[strconv.Itoa(status)].(map[string]any); ok != nil {
			ok["headers"] = map[string]any{op.Header: map[string]any{"schema": map[string]any{"type": "string"}}}
		}
	}
	out["400"] = errRef
	if rt.Perm != Public {
		out["401"] = errRef
		out["403"] = errRef
	}
	if len(pathParams(rt.Path)) > 0 || rt.Env != NoEnv {
		out["404"] = errRef
	}
	if rt.Path == "/api/auth/login" {
		out["429"] = errRef
	}
	out["500"] = errRef
	return out
}

// streamSchema is the schema of a non-JSON body.
func streamSchema(media string) map[string]any {
	if media == mediaSSE || strings.HasPrefix(media, "text/") {
		return map[string]any{"type": "string"}
	}
	return map[string]any{"type": "string", "contentMediaType": media}
}

// openAPIOverrides are the schemas of the request types that decode
// themselves.
var openAPIOverrides = map[reflect.Type]openapi.Schema{
	reflect.TypeFor[flexString]():  {"type": []string{"string", "integer", "null"}, "description": "a string or a non-negative integer"},
	reflect.TypeFor[flexCommand](): {"type": []string{"string", "array", "null"}, "items": map[string]any{"type": "string"}, "description": "a command line (split on white space), or its words"},
	reflect.TypeFor[secretField](): {"type": []string{"string", "null"}, "description": "absent or null keeps the stored secret"},
	reflect.TypeFor[fileMode]():    {"type": []string{"string", "integer"}, "description": "an octal mode (\"755\") or its number"},
	reflect.TypeFor[restartPolicy](): {"anyOf": []any{map[string]any{"type": []string{"string", "null"}},
		map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"},
			"maximumRetryCount": map[string]any{"type": "integer"}}}}, "description": "a restart policy's name, or {name, maximumRetryCount}"},
	reflect.TypeFor[formBinary]():  {"type": "string", "contentMediaType": "application/octet-stream", "description": "a file's bytes"},
	reflect.TypeFor[flexPorts]():   {"type": []string{"object", "array", "null"}, "description": "{\"80/tcp\": {HostIp, HostPort}}, or [{containerPort, hostPort, hostIp, protocol}]; null publishes nothing"},
	reflect.TypeFor[flexVolumes](): {"type": []string{"object", "array", "null"}, "description": "anonymous volumes {\"/data\": {}}, or binds [\"source:/destination[:ro]\"]"},
	reflect.TypeFor[configLabels](): {"type": []string{"array", "object", "null"}, "items": map[string]any{"type": "object",
		"properties": map[string]any{"key": map[string]any{"type": "string"}, "value": map[string]any{"type": "string"}}},
		"description": "[{key, value}], or an object of labels"},
	reflect.TypeFor[configVolumes](): {"type": []string{"array", "null"}, "items": map[string]any{"anyOf": []any{
		map[string]any{"type": "object", "properties": map[string]any{"hostPath": map[string]any{"type": "string"},
			"containerPath": map[string]any{"type": "string"}, "mode": map[string]any{"type": "string"}}},
		map[string]any{"type": "string"}}}, "description": "[{hostPath, containerPath, mode}]; an item may also be \"source:/target[:mode]\""},
	reflect.TypeFor[nullableList](): {"type": []string{"array", "null"}, "items": map[string]any{"type": "string"}, "description": "null clears the list"},
	reflect.TypeFor[healthInput]():  {"type": []string{"object", "null"}, "description": "{test, interval, timeout, retries, startPeriod} (durations in nanoseconds); null turns the image's health check off; an empty test ({\"test\": []}) goes back to the image's"},
}
