package engine

import (
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeListItems decodes the engine's container list as
// json.Unmarshal(body, &items) does. Answers of the engine's usual shape
// are read by listDecoder, without reflection and in one pass, about four
// times faster; anything else (a key given twice or in other letter case,
// a value of another type, invalid JSON, deep nesting) makes listDecoder
// give up, and encoding/json decodes the answer, errors included.
// FuzzListDecoder holds listDecoder to what encoding/json decodes.
func decodeListItems(body []byte) ([]listItem, error) {
	if items, ok := fastListItems(body); ok {
		return items, nil
	}
	var items []listItem
	err := json.Unmarshal(body, &items)
	return items, err
}

// fastListItems is listDecoder's reading of body; ok is false when it gave
// up, and then items means nothing.
func fastListItems(body []byte) (items []listItem, ok bool) {
	d := listDecoder{b: body}
	if d.null() {
		items = nil
	} else if d.open('[') {
		items = []listItem{}
		for more := d.more(']'); more && !d.bad; more = d.next(']') {
			items = append(items, listItem{})
			if !d.null() {
				d.item(&items[len(items)-1])
			}
		}
	}
	d.ws()
	return items, !d.bad && d.i == len(d.b)
}

// listDecoder reads JSON from b at i. Every method gives up by setting bad
// (and then leaves i anywhere); the methods after that do nothing useful.
type listDecoder struct {
	b       []byte
	i       int
	depth   int
	bad     bool
	scratch []byte      // strSlow's output, reused
	strs    [256]string // strings read before (see text)
}

// text is the string of b, shared with an earlier equal one where it can:
// an engine's list repeats most of its strings (images, states, label keys
// and values, network names), and sharing them saves most of the list's
// allocations. strs is a cache indexed by a cheap hash; a collision only
// costs an allocation.
func (d *listDecoder) text(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	if n > 96 {
		return string(b)
	}
	h := (uint(n)*31+uint(b[0]))*31 + uint(b[n/2])
	h = (h*31 + uint(b[n-1])) & 255
	if s := d.strs[h]; s == string(b) {
		return s
	}
	s := string(b)
	d.strs[h] = s
	return s
}

// maxSkipDepth is the deepest nesting listDecoder reads; deeper answers are
// left to encoding/json (whose limit is 10,000).
const maxSkipDepth = 100

func (d *listDecoder) fail() { d.bad = true }

func (d *listDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space, 0 at the end.
func (d *listDecoder) peek() byte {
	d.ws()
	if d.i >= len(d.b) {
		return 0
	}
	return d.b[d.i]
}

func (d *listDecoder) eat(c byte) bool {
	if d.peek() == c && !d.bad {
		d.i++
		return true
	}
	return false
}

func (d *listDecoder) expect(c byte) {
	if !d.eat(c) {
		d.fail()
	}
}

// literal consumes word (true, false, null) at i.
func (d *listDecoder) literal(word string) bool {
	if len(d.b)-d.i >= len(word) && string(d.b[d.i:d.i+len(word)]) == word {
		d.i += len(word)
		return true
	}
	d.fail()
	return false
}

// null consumes a null if one is next.
func (d *listDecoder) null() bool {
	if d.peek() == 'n' {
		return d.literal("null")
	}
	return false
}

// open consumes the '[' or '{' (c) that starts an array or object;
// without one it gives up.
func (d *listDecoder) open(c byte) bool {
	if !d.eat(c) {
		d.fail()
		return false
	}
	return true
}

// more reports whether the array or object just opened has an element (and
// consumes its closing ']' or '}', end, when not).
func (d *listDecoder) more(end byte) bool { return !d.eat(end) && !d.bad }

// next consumes what follows an element: ',' (true) or end (false).
func (d *listDecoder) next(end byte) bool {
	if d.eat(',') {
		return true
	}
	d.expect(end)
	return false
}

// elems and members start the loops over an array's elements and an
// object's members: for more := d.elems(); more && !d.bad; more = d.next(']').
func (d *listDecoder) elems() bool   { return d.open('[') && d.more(']') }
func (d *listDecoder) members() bool { return d.open('{') && d.more('}') }

// key reads a member's name and the ':' after it.
func (d *listDecoder) key() []byte {
	if d.peek() != '"' {
		d.fail()
		return nil
	}
	k := d.strBytes()
	d.expect(':')
	return k
}

// once gives up on a member seen before in the same object: encoding/json
// merges repeated members in ways not worth copying.
func (d *listDecoder) once(seen *uint16, bit uint16) {
	if *seen&bit != 0 {
		d.fail()
	}
	*seen |= bit
}

// unknown skips the value of member k, which matches none of fields
// exactly. encoding/json would fill a field whose name k matches in other
// letter case, so then it gives up; and on any key beyond ASCII, whose
// Unicode case folding it does not copy.
func (d *listDecoder) unknown(k []byte, fields []string) {
	for _, c := range k {
		if c >= utf8.RuneSelf {
			d.fail()
			return
		}
	}
	for _, f := range fields {
		if asciiEqualFold(k, f) {
			d.fail()
			return
		}
	}
	d.skip()
}

func asciiEqualFold(k []byte, f string) bool {
	if len(k) != len(f) {
		return false
	}
	for i := range k {
		a, b := k[i], f[i]
		if 'a' <= a && a <= 'z' {
			a -= 'a' - 'A'
		}
		if 'a' <= b && b <= 'z' {
			b -= 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// str reads a string value; null leaves *s as it is (encoding/json's rule).
func (d *listDecoder) str(s *string) {
	switch d.peek() {
	case '"':
		*s = d.text(d.strBytes())
	case 'n':
		d.literal("null")
	default:
		d.fail()
	}
}

// strBytes reads the string at i ('"' there), unescaped. It aliases b when
// the string has no escape and only valid UTF-8, else d.scratch: it is
// valid until the next string is read.
func (d *listDecoder) strBytes() []byte {
	start := d.i + 1
	for j := start; j < len(d.b); j++ {
		c := d.b[j]
		if c == '"' {
			d.i = j + 1
			return d.b[start:j]
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return d.strSlow(start, j)
		}
	}
	d.fail()
	return nil
}

// strSlow reads the rest of a string from j on, start being its first
// byte: escapes decoded, each byte of invalid UTF-8 and each lone surrogate
// read as U+FFFD, as encoding/json does.
func (d *listDecoder) strSlow(start, j int) []byte {
	out := append(d.scratch[:0], d.b[start:j]...)
	defer func() { d.scratch = out[:0] }()
	for j < len(d.b) {
		c := d.b[j]
		switch {
		case c == '"':
			d.i = j + 1
			return out
		case c < 0x20:
			d.fail()
			return nil
		case c == '\\':
			if j+1 >= len(d.b) {
				d.fail()
				return nil
			}
			e := d.b[j+1]
			j += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(d.b[j:])
				if r < 0 {
					d.fail()
					return nil
				}
				j += 4
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if j+1 < len(d.b) && d.b[j] == '\\' && d.b[j+1] == 'u' {
						r2 = hex4(d.b[j+2:])
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						j += 6
						r = dec
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				d.fail()
				return nil
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			j++
		default:
			r, n := utf8.DecodeRune(d.b[j:])
			if r == utf8.RuneError && n == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, d.b[j:j+n]...)
			}
			j += n
		}
	}
	d.fail()
	return nil
}

// hex4 is the value of the four hex digits b starts with, -1 without them.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// number consumes a JSON number and reports whether it is an integer (no
// fraction, no exponent).
func (d *listDecoder) number() (start int, integer bool) {
	d.ws()
	start = d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.b) && d.b[d.i] == '0':
		d.i++
	case d.i < len(d.b) && '1' <= d.b[d.i] && d.b[d.i] <= '9':
		d.digits()
	default:
		d.fail()
		return start, false
	}
	integer = true
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		integer = false
		if !d.digits() {
			d.fail()
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		integer = false
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if !d.digits() {
			d.fail()
		}
	}
	return start, integer
}

func (d *listDecoder) digits() bool {
	from := d.i
	for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
		d.i++
	}
	return d.i > from
}

// int64 reads an integer value into *v (null leaves it); a fraction, an
// exponent or a value beyond int64 gives up.
func (d *listDecoder) int64(v *int64) {
	switch c := d.peek(); {
	case c == 'n':
		d.literal("null")
		return
	case c != '-' && (c < '0' || c > '9'):
		d.fail()
		return
	}
	start, integer := d.number()
	if !integer || d.bad {
		d.fail()
		return
	}
	neg := d.b[start] == '-'
	if neg {
		start++
	}
	var u uint64
	for _, c := range d.b[start:d.i] {
		if u > (1<<63)/10 {
			d.fail()
			return
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case neg && u <= 1<<63:
		*v = int64(-u)
	case !neg && u < 1<<63:
		*v = int64(u)
	default:
		d.fail()
	}
}

func (d *listDecoder) int(v *int) {
	n := int64(*v)
	d.int64(&n)
	if int64(int(n)) != n {
		d.fail()
	}
	*v = int(n)
}

func (d *listDecoder) bool(v *bool) {
	switch d.peek() {
	case 't':
		*v = d.literal("true")
	case 'f':
		d.literal("false")
		*v = false
	case 'n':
		d.literal("null")
	default:
		d.fail()
	}
}

// skip consumes one value of any kind, checking it is valid JSON.
func (d *listDecoder) skip() {
	switch d.peek() {
	case '"':
		d.strBytes()
	case '{':
		if d.deeper() {
			for more := d.members(); more && !d.bad; more = d.next('}') {
				d.key()
				d.skip()
			}
			d.depth--
		}
	case '[':
		if d.deeper() {
			for more := d.elems(); more && !d.bad; more = d.next(']') {
				d.skip()
			}
			d.depth--
		}
	case 't':
		d.literal("true")
	case 'f':
		d.literal("false")
	case 'n':
		d.literal("null")
	default:
		d.number()
	}
}

func (d *listDecoder) deeper() bool {
	d.depth++
	if d.depth > maxSkipDepth {
		d.fail()
		return false
	}
	return true
}
