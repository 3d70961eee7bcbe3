package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sweepPathValues are absurd values for path parameters: huge and negative
// numbers, escaped climbs, unicode, a 10 kB name, an encoded NUL.
var sweepPathValues = []string{
	"99999999999999999999999",
	"-1",
	"..%2f..%2finfo",
	"..%2F..%2Fcontainers%2Fjson",
	"%2e%2e",
	"%C3%BCn%C3%AF%F0%9F%98%80",
	strings.Repeat("a", 10240),
	"%00",
}

// sweepEnvValues are absurd values of the env query parameter.
var sweepEnvValues = []string{"abc", "-1", "99999999999999999999999"}

// sweepBodyOnlyMalformed are operations that would act on the engine's
// whole state with a well-formed empty body (prune, check or update all):
// they get only bodies no handler may accept as a request.
var sweepBodyOnlyMalformed = []string{"/api/prune/", "/api/containers/batch-update", "/api/containers/check-updates",
	"/api/batch", "/api/images/scan", "/api/environments/{id}/image-prune"}

// sweepSkip are operations the sweep does not drive (none: streams are
// read to their status line and closed).
var sweepSkip = map[string]bool{}

// TestOpenAPISweepNeverAnswers5xx drives every operation of the served
// OpenAPI document with absurd path values, absurd env values, malformed
// JSON, bodies of the wrong type and bodies whose every field has the wrong
// type or an absurd value. No answer may be a 5xx (a bad request is the
// client's fault and says so; an engine failure has its own 503/504), the
// server stays up, and its memory comes back within 20 % afterwards.
func TestOpenAPISweepNeverAnswers5xx(t *testing.T) {
	h := newHarness(t)
	status, raw := h.do("GET", "/api/openapi.json", nil)
	if status != 200 {
		t.Fatalf("GET /api/openapi.json = %d", status)
	}
	var doc openAPIDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	ops := doc.operations()
	if len(ops) < 250 {
		t.Fatalf("the document has %d operations, expected the whole API", len(ops))
	}
	client := &http.Client{Timeout: 20 * time.Second}
	// One harmless request per operation first, so that what is made once and
	// kept (connections, parsed templates, the document) is in the baseline.
	for _, op := range ops {
		if op.method == "GET" {
			_, _, _ = sweepSend(client, h.url, sweepRequest{op.method, fillPath(op.path, "berth-sweep-missing"), ""})
		}
	}
	before := settledRSS()
	var failures []string
	sent := 0
	for _, op := range ops {
		if sweepSkip[op.method+" "+op.path] {
			continue
		}
		for _, rq := range sweepRequests(op, &doc) {
			sent++
			code, body, err := sweepSend(client, h.url, rq)
			switch {
			case err != nil:
				failures = append(failures, fmt.Sprintf("%s %.200s: %v", rq.method, rq.path, err))
			case code >= 500:
				failures = append(failures, fmt.Sprintf("%s %.200s (body %.100s) = %d %.300s", rq.method, rq.path, rq.body, code, body))
			}
		}
	}
	// An environment whose engine cannot be reached: every operation on it
	// answers 503 (or a 4xx for what it refuses first), never another 5xx.
	var offline struct {
		ID int64 `json:"id"`
	}
	h.must(201, "POST", "/api/environments", map[string]any{"name": "sweep-offline-" + h.label, "connectionType": "socket",
		"socketPath": "/nonexistent/berth-sweep.sock"}, &offline)
	t.Cleanup(func() { h.do("DELETE", fmt.Sprintf("/api/environments/%d", offline.ID), nil) })
	for _, op := range ops {
		if sweepSkip[op.method+" "+op.path] || !op.query["env"] && !op.query["envId"] {
			continue
		}
		name := "env"
		if op.query["envId"] {
			name = "envId"
		}
		rq := sweepRequest{op.method, fmt.Sprintf("%s?%s=%d", fillPath(op.path, "berth-sweep-missing"), name, offline.ID), ""}
		if op.method == "POST" || op.method == "PUT" || op.method == "PATCH" {
			rq.body = "{}"
			if sweepOnlyMalformed(op.path) {
				rq.body = "{"
			}
		}
		sent++
		code, body, err := sweepSend(client, h.url, rq)
		switch {
		case err != nil:
			failures = append(failures, fmt.Sprintf("offline: %s %.200s: %v", rq.method, rq.path, err))
		case code >= 500 && code != http.StatusServiceUnavailable:
			failures = append(failures, fmt.Sprintf("offline: %s %.200s (body %.100s) = %d %.300s", rq.method, rq.path, rq.body, code, body))
		}
	}
	t.Logf("%d operations, %d requests, %d failures", len(ops), sent, len(failures))
	sort.Strings(failures)
	for _, f := range failures {
		t.Error(f)
	}
	if code, _ := h.do("GET", "/api/health", nil); code != 200 {
		t.Fatalf("the server is not alive after the sweep: /api/health = %d", code)
	}
	after := settledRSS()
	t.Logf("RSS before %d kB, after %d kB", before, after)
	if before > 0 && after > before*12/10 {
		t.Errorf("RSS grew from %d kB to %d kB over the sweep (more than 20 %%)", before, after)
	}
}

// settledRSS is the process's resident memory in kB after a full
// collection, with the freed memory returned to the system.
func settledRSS() int {
	runtime.GC()
	debug.FreeOSMemory()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

type sweepRequest struct {
	method, path string
	body         string // "" sends none
}

// sweepSend sends rq and returns the status and the start of the body; a
// stream is closed once its status is known.
func sweepSend(client *http.Client, base string, rq sweepRequest) (int, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var rd io.Reader
	if rq.body != "" {
		rd = strings.NewReader(rq.body)
	}
	req, err := http.NewRequestWithContext(ctx, rq.method, base+rq.path, rd)
	if err != nil {
		return 0, "", err
	}
	if rq.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") ||
		strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-tar") ||
		strings.HasPrefix(resp.Header.Get("Content-Type"), "application/gzip") {
		return resp.StatusCode, "", nil
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(data), nil
}

// sweepRequests are the requests the sweep sends for op.
func sweepRequests(op sweepOp, doc *openAPIDoc) []sweepRequest {
	var out []sweepRequest
	withBody := op.method == "POST" || op.method == "PUT" || op.method == "PATCH"
	onlyMalformed := sweepOnlyMalformed(op.path)
	env := func(p, v string) string {
		if !op.query["env"] && !op.query["envId"] {
			return p
		}
		name := "env"
		if op.query["envId"] {
			name = "envId"
		}
		sep := "?"
		if strings.Contains(p, "?") {
			sep = "&"
		}
		return p + sep + name + "=" + v
	}
	// A plausible but missing object: the body variants run against it.
	missing := fillPath(op.path, "berth-sweep-missing")
	hasParams := missing != op.path
	for _, v := range sweepPathValues {
		if hasParams {
			out = append(out, sweepRequest{op.method, env(fillPath(op.path, v), "1"), bodyIf(withBody, "{}", onlyMalformed)})
		}
	}
	for _, v := range sweepEnvValues {
		if op.query["env"] || op.query["envId"] {
			out = append(out, sweepRequest{op.method, env(missing, v), bodyIf(withBody, "{}", onlyMalformed)})
		}
	}
	if !withBody {
		if !hasParams && !op.query["env"] && !op.query["envId"] {
			out = append(out, sweepRequest{op.method, op.path + "?limit=-1&offset=99999999999999999999&page=abc", ""})
		}
		return out
	}
	target := env(missing, "1")
	if onlyMalformed && !hasParams {
		target = env(missing, "abc")
	}
	for _, b := range []string{"{", "[]", `"x"`, "12", `{"a":` + strings.Repeat("[", 5000)} {
		out = append(out, sweepRequest{op.method, target, b})
	}
	if onlyMalformed {
		return out
	}
	if props := doc.properties(op.body); len(props) > 0 {
		wrong, absurd := map[string]any{}, map[string]any{}
		for name, typ := range props {
			wrong[name] = wrongValue(typ)
			absurd[name] = absurdValue(typ)
		}
		for _, b := range []map[string]any{wrong, absurd} {
			data, _ := json.Marshal(b)
			out = append(out, sweepRequest{op.method, target, string(data)})
		}
	}
	return out
}

// sweepOnlyMalformed reports whether the operation at path gets only bodies
// no handler may accept (see sweepBodyOnlyMalformed).
func sweepOnlyMalformed(path string) bool {
	for _, p := range sweepBodyOnlyMalformed {
		if strings.Contains(path, p) {
			return true
		}
	}
	return false
}

func bodyIf(with bool, body string, onlyMalformed bool) string {
	if !with {
		return ""
	}
	if onlyMalformed {
		return "{"
	}
	return body
}

// fillPath puts v in every {parameter} of p.
func fillPath(p, v string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			parts[i] = v
		}
	}
	return strings.Join(parts, "/")
}

// wrongValue is a value of another JSON type than typ.
func wrongValue(typ string) any {
	switch typ {
	case "string":
		return 12345
	case "integer", "number":
		return "abc"
	case "boolean":
		return "yes"
	case "array":
		return map[string]any{"a": 1}
	default:
		return "not an object"
	}
}

// absurdValue is a value of type typ no request should carry.
func absurdValue(typ string) any {
	switch typ {
	case "string":
		return "../../" + strings.Repeat("ü😀/..", 1500) + "\x00"
	case "integer", "number":
		return -1e30
	case "boolean":
		return true
	case "array":
		return []any{nil, -1, strings.Repeat("x", 10240), map[string]any{"..": nil}}
	default:
		return map[string]any{"": nil, "..": strings.Repeat("y", 10240)}
	}
}

// openAPIDoc is the part of the served document the sweep reads.
type openAPIDoc struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]sweepSchema `json:"schemas"`
	} `json:"components"`
}

type sweepSchema struct {
	Ref        string                 `json:"$ref"`
	Type       any                    `json:"type"`
	Properties map[string]sweepSchema `json:"properties"`
	AllOf      []sweepSchema          `json:"allOf"`
}

type sweepOp struct {
	method, path string
	query        map[string]bool
	body         *sweepSchema
}

// operations lists the document's operations in a stable order.
func (d *openAPIDoc) operations() []sweepOp {
	var out []sweepOp
	for path, item := range d.Paths {
		for method, raw := range item {
			m := strings.ToUpper(method)
			switch m {
			case "GET", "POST", "PUT", "PATCH", "DELETE":
			default:
				continue
			}
			var op struct {
				Parameters []struct {
					Name string `json:"name"`
					In   string `json:"in"`
				} `json:"parameters"`
				RequestBody struct {
					Content map[string]struct {
						Schema sweepSchema `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				continue
			}
			o := sweepOp{method: m, path: path, query: map[string]bool{}}
			for _, p := range op.Parameters {
				if p.In == "query" {
					o.query[p.Name] = true
				}
			}
			if c, ok := op.RequestBody.Content["application/json"]; ok {
				s := c.Schema
				o.body = &s
			}
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].path != out[j].path {
			return out[i].path < out[j].path
		}
		return out[i].method < out[j].method
	})
	return out
}

// properties are the top-level properties of schema s and their JSON types.
func (d *openAPIDoc) properties(s *sweepSchema) map[string]string {
	out := map[string]string{}
	if s == nil {
		return out
	}
	var walk func(s sweepSchema, depth int)
	walk = func(s sweepSchema, depth int) {
		if depth > 8 {
			return
		}
		if s.Ref != "" {
			if r, ok := d.Components.Schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")]; ok {
				walk(r, depth+1)
			}
			return
		}
		for _, a := range s.AllOf {
			walk(a, depth+1)
		}
		for name, p := range s.Properties {
			out[name] = d.typeOf(p, 0)
		}
	}
	walk(*s, 0)
	return out
}

// typeOf is the JSON type of s ("object" when unknown).
func (d *openAPIDoc) typeOf(s sweepSchema, depth int) string {
	if s.Ref != "" && depth < 8 {
		if r, ok := d.Components.Schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")]; ok {
			return d.typeOf(r, depth+1)
		}
	}
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		for _, v := range t {
			if str, ok := v.(string); ok && str != "null" {
				return str
			}
		}
	}
	return "object"
}
