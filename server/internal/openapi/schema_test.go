package openapi

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

type base struct {
	ID      int64     `json:"id"`
	Created time.Time `json:"createdAt"`
}

type node struct {
	base
	Name     string            `json:"name"`
	Note     string            `json:"note,omitempty"`
	Hidden   string            `json:"-"`
	Children []*node           `json:"children"`
	Labels   map[string]string `json:"labels"`
	Size     *uint32           `json:"size"`
	Count    int               `json:"count,string"`
	Raw      json.RawMessage   `json:"raw"`
	Any      any               `json:"any"`
	Data     []byte            `json:"data"`
	Plain    bool
	private  int // unexported: encoding/json leaves it out
}

var _ = node{}.private

type custom struct{}

func (c *custom) UnmarshalJSON([]byte) error { return nil }

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStructBecomesAComponentFollowingEncodingJSON(t *testing.T) {
	r := NewReflector(nil)
	s := r.Of([]node{}, Response)
	if got := asJSON(t, s); got != `{"items":{"$ref":"#/components/schemas/openapi.node"},"type":["array","null"]}` {
		t.Fatalf("slice schema %s", got)
	}
	n := r.Components["openapi.node"]
	props := n["properties"].(Schema)
	want := map[string]string{
		"id":        `{"format":"int64","type":"integer"}`,
		"createdAt": `{"format":"date-time","type":"string"}`,
		"name":      `{"type":"string"}`,
		"note":      `{"type":"string"}`,
		"children":  `{"items":{"anyOf":[{"$ref":"#/components/schemas/openapi.node"},{"type":"null"}]},"type":["array","null"]}`,
		"labels":    `{"additionalProperties":{"type":"string"},"type":["object","null"]}`,
		"size":      `{"minimum":0,"type":["integer","null"]}`,
		"count":     `{"type":"string"}`,
		"raw":       `{}`,
		"any":       `{}`,
		"data":      `{"contentEncoding":"base64","type":["string","null"]}`,
		"Plain":     `{"type":"boolean"}`,
	}
	if len(props) != len(want) {
		t.Errorf("properties %v, want %d of them", asJSON(t, props), len(want))
	}
	for k, w := range want {
		if got := asJSON(t, props[k]); got != w {
			t.Errorf("%s: %s, want %s", k, got, w)
		}
	}
	if got := asJSON(t, n["required"]); got != `["Plain","any","children","count","createdAt","data","id","labels","name","raw","size"]` {
		t.Errorf("required %s", got)
	}
}

func TestRequestsRequireNothingAndHonourUnmarshalers(t *testing.T) {
	r := NewReflector(map[reflect.Type]Schema{reflect.TypeFor[custom](): {"type": "integer"}})
	type body struct {
		Name string `json:"name"`
		C    custom `json:"c"`
	}
	if got := asJSON(t, r.Of(body{}, Request)); got != `{"$ref":"#/components/schemas/openapi.bodyInput"}` {
		t.Fatalf("request schema %s", got)
	}
	s := r.Components["openapi.bodyInput"]
	if _, ok := s["required"]; ok {
		t.Errorf("request schema requires %v", s["required"])
	}
	if got := asJSON(t, s["properties"].(Schema)["c"]); got != `{"type":"integer"}` {
		t.Errorf("override ignored: %s", got)
	}
	// Without an override, a type that decodes itself is left open.
	if got := asJSON(t, NewReflector(nil).Of(custom{}, Request)); got != `{}` {
		t.Errorf("self-decoding type: %s", got)
	}
}

func TestRequestAndResponseComponentsOfOneTypeStayApart(t *testing.T) {
	r := NewReflector(nil)
	resp := asJSON(t, r.Of(base{}, Response))
	req := asJSON(t, r.Of(base{}, Request))
	if resp == req {
		t.Fatalf("one component for both sides: %s", resp)
	}
	if _, ok := r.Components["openapi.base"]["required"]; !ok {
		t.Error("the response component lost its required fields")
	}
	if _, ok := r.Components["openapi.baseInput"]["required"]; ok {
		t.Error("the request component requires fields")
	}
}
