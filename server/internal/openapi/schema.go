// Package openapi turns Go types into JSON Schema (draft 2020-12, the
// dialect of OpenAPI 3.1) by reflection, following encoding/json's rules, so
// that the served API description is derived from the very types the
// handlers decode and encode.
package openapi

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Schema is one JSON Schema object.
type Schema = map[string]any

// Mode says which side of the wire a type is reflected for.
type Mode int

const (
	// Response schemas list as required every field encoding/json always
	// writes (no omitempty or omitzero).
	Response Mode = iota
	// Request schemas require nothing: the handlers' decoders accept
	// missing fields.
	Request
)

// Reflector converts Go types to schemas. Named struct types become
// components (referenced with $ref); everything else is inlined. It is not
// safe for concurrent use.
type Reflector struct {
	// Overrides are the schemas of types encoding/json cannot see into
	// (custom unmarshalers, raw JSON).
	Overrides map[reflect.Type]Schema
	// Components are the named schemas collected so far, by component name.
	Components map[string]Schema

	names map[key]string // component name of each reflected named struct
	owner map[string]key // the type and mode behind each component name
}

type key struct {
	t    reflect.Type
	mode Mode
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	durationType  = reflect.TypeFor[time.Duration]()
	rawType       = reflect.TypeFor[json.RawMessage]()
	marshaler     = reflect.TypeFor[json.Marshaler]()
	unmarshaler   = reflect.TypeFor[json.Unmarshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	unsafeName    = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
)

// NewReflector returns a Reflector with the given overrides.
func NewReflector(overrides map[reflect.Type]Schema) *Reflector {
	if overrides == nil {
		overrides = map[reflect.Type]Schema{}
	}
	return &Reflector{Overrides: overrides, Components: map[string]Schema{}, names: map[key]string{}, owner: map[string]key{}}
}

// Of returns the schema of v's type (v may be a nil pointer of the type).
func (r *Reflector) Of(v any, mode Mode) Schema {
	if v == nil {
		return Schema{}
	}
	if t, ok := v.(reflect.Type); ok {
		return r.Type(t, mode)
	}
	return r.Type(reflect.TypeOf(v), mode)
}

// Type returns the schema of t.
func (r *Reflector) Type(t reflect.Type, mode Mode) Schema {
	if s, ok := r.Overrides[t]; ok {
		return clone(s)
	}
	switch t {
	case timeType:
		return Schema{"type": "string", "format": "date-time"}
	case durationType:
		return Schema{"type": "integer", "format": "int64", "description": "nanoseconds"}
	case rawType:
		return Schema{}
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		// A type that encodes or decodes itself: its shape is its own.
		pt := reflect.PointerTo(t)
		custom := t.Implements(marshaler) || pt.Implements(marshaler)
		if mode == Request {
			custom = pt.Implements(unmarshaler)
		}
		if custom {
			return Schema{}
		}
		if t.Implements(textMarshaler) || pt.Implements(textMarshaler) {
			return Schema{"type": "string"}
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return Schema{"type": "boolean"}
	case reflect.Int, reflect.Int64:
		return Schema{"type": "integer", "format": "int64"}
	case reflect.Int8, reflect.Int16, reflect.Int32:
		return Schema{"type": "integer", "format": "int32"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return Schema{"type": "integer", "minimum": 0}
	case reflect.Float32:
		return Schema{"type": "number", "format": "float"}
	case reflect.Float64:
		return Schema{"type": "number", "format": "double"}
	case reflect.String:
		return Schema{"type": "string"}
	case reflect.Interface:
		return Schema{}
	case reflect.Pointer:
		return nullable(r.Type(t.Elem(), mode))
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nullable(Schema{"type": "string", "contentEncoding": "base64"})
		}
		return nullable(Schema{"type": "array", "items": r.Type(t.Elem(), mode)})
	case reflect.Array:
		return Schema{"type": "array", "items": r.Type(t.Elem(), mode), "minItems": t.Len(), "maxItems": t.Len()}
	case reflect.Map:
		return nullable(Schema{"type": "object", "additionalProperties": r.Type(t.Elem(), mode)})
	case reflect.Struct:
		if t.Name() == "" {
			return r.structSchema(t, mode)
		}
		return Schema{"$ref": "#/components/schemas/" + r.component(t, mode)}
	}
	// Channels, functions and complex numbers do not encode.
	return Schema{}
}

// component returns the component name of the named struct t, reflecting it
// on first use.
func (r *Reflector) component(t reflect.Type, mode Mode) string {
	k := key{t, mode}
	if n, ok := r.names[k]; ok {
		return n
	}
	base := componentName(t)
	if mode == Request && !strings.HasSuffix(base, "Request") {
		base += "Input"
	}
	name := base
	for i := 2; ; i++ {
		if _, taken := r.owner[name]; !taken {
			break
		}
		name = fmt.Sprintf("%s%d", base, i)
	}
	r.names[k], r.owner[name] = name, k
	r.Components[name] = Schema{} // a placeholder while recursive types refer to it
	r.Components[name] = r.structSchema(t, mode)
	return name
}

// componentName is "<package>.<Type>", generic arguments flattened.
func componentName(t reflect.Type) string {
	pkg := t.PkgPath()
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		pkg = pkg[i+1:]
	}
	name := t.Name()
	if pkg != "" {
		name = pkg + "." + name
	}
	return strings.Trim(unsafeName.ReplaceAllString(name, "_"), "_")
}

// field is one JSON member of a struct, with its depth for encoding/json's
// rule that the shallowest field of a name wins.
type field struct {
	name     string
	schema   Schema
	required bool
	depth    int
	tagged   bool
}

func (r *Reflector) structSchema(t reflect.Type, mode Mode) Schema {
	var fields []field
	r.collect(t, mode, 0, map[reflect.Type]bool{}, &fields)
	// Resolve duplicates: shallowest wins, then a tagged one; a tie drops both.
	byName := map[string][]field{}
	var order []string
	for _, f := range fields {
		if _, ok := byName[f.name]; !ok {
			order = append(order, f.name)
		}
		byName[f.name] = append(byName[f.name], f)
	}
	props := Schema{}
	var required []string
	for _, name := range order {
		fs := byName[name]
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].depth < fs[j].depth })
		if len(fs) > 1 && fs[0].depth == fs[1].depth {
			tagged := 0
			for _, f := range fs {
				if f.depth == fs[0].depth && f.tagged {
					tagged++
				}
			}
			if tagged != 1 {
				continue
			}
			for _, f := range fs {
				if f.depth == fs[0].depth && f.tagged {
					fs[0] = f
				}
			}
		}
		props[name] = fs[0].schema
		if fs[0].required && mode == Response {
			required = append(required, name)
		}
	}
	s := Schema{"type": "object", "properties": props}
	if len(required) > 0 {
		sort.Strings(required)
		s["required"] = required
	}
	return s
}

// collect appends t's JSON members, descending into embedded structs.
func (r *Reflector) collect(t reflect.Type, mode Mode, depth int, seen map[reflect.Type]bool, out *[]field) {
	if seen[t] {
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if sf.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				r.collect(et, mode, depth+1, seen, out)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		tagged := name != ""
		if name == "" {
			name = sf.Name
		}
		optional := hasOpt(opts, "omitempty") || hasOpt(opts, "omitzero")
		var s Schema
		if hasOpt(opts, "string") && isScalar(ft) {
			s = Schema{"type": "string"}
		} else {
			s = r.Type(ft, mode)
		}
		*out = append(*out, field{name: name, schema: s, required: !optional, depth: depth, tagged: tagged})
	}
}

func hasOpt(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

func isScalar(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}

// nullable lets s also be null, as a nil pointer, slice or map encodes.
func nullable(s Schema) Schema {
	if len(s) == 0 { // anything already includes null
		return s
	}
	switch typ := s["type"].(type) {
	case string:
		s["type"] = []string{typ, "null"}
		return s
	case []string:
		for _, x := range typ {
			if x == "null" {
				return s
			}
		}
		s["type"] = append(typ, "null")
		return s
	}
	return Schema{"anyOf": []any{s, Schema{"type": "null"}}}
}

func clone(s Schema) Schema {
	out := make(Schema, len(s))
	for k, v := range s {
		out[k] = v
	}
	return out
}
