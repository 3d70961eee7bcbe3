package engine

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendContainersJSON appends list as json.Marshal writes it, byte for
// byte (FuzzAppendContainersJSON), without reflection: a list of a few
// hundred containers is written in a fifth of encoding/json's time, which
// matters to the first list after a change (docs/performance.md).
func AppendContainersJSON(dst []byte, list []Container) []byte {
	if list == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	var keys []string
	for i := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendContainer(dst, &list[i], &keys)
	}
	return append(dst, ']')
}

func appendContainer(dst []byte, c *Container, keys *[]string) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, c.ID)
	dst = append(dst, `,"name":`...)
	dst = appendJSONString(dst, c.Name)
	dst = append(dst, `,"image":`...)
	dst = appendJSONString(dst, c.Image)
	dst = append(dst, `,"imageId":`...)
	dst = appendJSONString(dst, c.ImageID)
	dst = append(dst, `,"state":`...)
	dst = appendJSONString(dst, c.State)
	dst = append(dst, `,"status":`...)
	dst = appendJSONString(dst, c.Status)
	dst = append(dst, `,"created":`...)
	dst = strconv.AppendInt(dst, c.Created, 10)
	dst = append(dst, `,"ports":`...)
	dst = appendPorts(dst, c.Ports)
	dst = append(dst, `,"networks":`...)
	dst = appendMap(dst, c.Networks, keys, func(dst []byte, n NetIP) []byte {
		dst = append(dst, `{"ipAddress":`...)
		return append(appendJSONString(dst, n.IPAddress), '}')
	})
	if c.Health != "" {
		dst = append(dst, `,"health":`...)
		dst = appendJSONString(dst, c.Health)
	}
	dst = append(dst, `,"restartCount":`...)
	dst = strconv.AppendInt(dst, int64(c.RestartCount), 10)
	if c.ExitCode != nil {
		dst = append(dst, `,"exitCode":`...)
		dst = strconv.AppendInt(dst, int64(*c.ExitCode), 10)
	}
	dst = append(dst, `,"mounts":`...)
	dst = appendMounts(dst, c.Mounts)
	dst = append(dst, `,"labels":`...)
	dst = appendMap(dst, c.Labels, keys, appendJSONString)
	dst = append(dst, `,"command":`...)
	dst = appendJSONString(dst, c.Command)
	return append(dst, '}')
}

func appendPorts(dst []byte, ports []Port) []byte {
	if ports == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, p := range ports {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		if p.IP != "" {
			dst = append(dst, `"IP":`...)
			dst = appendJSONString(dst, p.IP)
			dst = append(dst, ',')
		}
		dst = append(dst, `"PrivatePort":`...)
		dst = strconv.AppendInt(dst, int64(p.PrivatePort), 10)
		if p.PublicPort != 0 {
			dst = append(dst, `,"PublicPort":`...)
			dst = strconv.AppendInt(dst, int64(p.PublicPort), 10)
		}
		dst = append(dst, `,"Type":`...)
		dst = appendJSONString(dst, p.Type)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

func appendMounts(dst []byte, mounts []Mount) []byte {
	if mounts == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, m := range mounts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":`...)
		dst = appendJSONString(dst, m.Type)
		if m.Name != "" {
			dst = append(dst, `,"name":`...)
			dst = appendJSONString(dst, m.Name)
		}
		dst = append(dst, `,"source":`...)
		dst = appendJSONString(dst, m.Source)
		dst = append(dst, `,"destination":`...)
		dst = appendJSONString(dst, m.Destination)
		dst = append(dst, `,"mode":`...)
		dst = appendJSONString(dst, m.Mode)
		dst = append(dst, `,"rw":`...)
		dst = strconv.AppendBool(dst, m.RW)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendMap appends m as encoding/json writes a map: keys in byte order
// (sorted in *keys, a buffer), each value by value.
func appendMap[V any](dst []byte, m map[string]V, keys *[]string, value func([]byte, V) []byte) []byte {
	if m == nil {
		return append(dst, "null"...)
	}
	ks := (*keys)[:0]
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	*keys = ks
	dst = append(dst, '{')
	for i, k := range ks {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendJSONString(dst, k), ':')
		dst = value(dst, m[k])
	}
	return append(dst, '}')
}

// jsonPlain are the bytes appendJSONString copies as they are.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString appends s quoted as encoding/json quotes it (with its
// HTML escaping, as json.Marshal does): '"' and '\\' escaped, control
// characters as \b \f \n \r \t or \u00XX, '<', '>' and '&' as \u00XX,
// U+2028 and U+2029 as \u2028 and \u2029, each byte of invalid UTF-8 as
// \ufffd.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if jsonPlain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += n
			continue
		}
		i += n
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
