package engine

import (
	"bytes"
	"encoding/json"
	"testing"
)

// containersOf is the list the engine-like answer becomes.
func containersOf(t testing.TB, body []byte) []Container {
	items, err := decodeListItems(body)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Container, 0, len(items))
	for i := range items {
		out = append(out, items[i].container())
	}
	return out
}

func encodedAlike(t *testing.T, list []Container) {
	t.Helper()
	want, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	if got := AppendContainersJSON(nil, list); !bytes.Equal(got, want) {
		t.Fatalf("AppendContainersJSON wrote\n%s\nencoding/json\n%s", got, want)
	}
}

func TestAppendContainersJSONWritesWhatEncodingJSONWrites(t *testing.T) {
	code := -3
	for _, list := range [][]Container{
		nil, {}, containersOf(t, engineLikeList(3)),
		{{}, {Ports: []Port{}, Networks: map[string]NetIP{}, Mounts: []Mount{}, Labels: map[string]string{}}},
		{{ID: "a\"b\\c<d>&e\u2028\u2029\x00\x1f\x7f\xff é", ExitCode: &code, Health: "healthy", RestartCount: 7,
			Ports:    []Port{{IP: "::1", PrivatePort: 80, PublicPort: 8080, Type: "tcp"}, {PrivatePort: 53, Type: "udp"}},
			Networks: map[string]NetIP{"z": {IPAddress: "10.0.0.2"}, "a": {}, "é": {IPAddress: "x"}},
			Mounts:   []Mount{{Type: "bind", Source: "/a", Destination: "/b", Mode: "ro"}, {Type: "volume", Name: "v", RW: true}},
			Labels:   map[string]string{"b": "2", "a": "1", "A": "", "<": "&"}}},
	} {
		encodedAlike(t, list)
	}
}

func FuzzAppendContainersJSON(f *testing.F) {
	f.Add("id", "name", "k", "v", "10.0.0.1", "", int64(1), 80, true)
	f.Add("a\"<&>\u2028", "\xff\x00é", "\x7f", "\\", "::1", "healthy", int64(-5), 0, false)
	f.Fuzz(func(t *testing.T, s1, s2, k, v, ip, health string, created int64, port int, rw bool) {
		code := port - 1
		c := Container{ID: s1, Name: s2, Image: k + v, ImageID: v, State: s1, Status: s2, Created: created,
			Ports:    []Port{{IP: ip, PrivatePort: port, PublicPort: -port, Type: k}},
			Networks: map[string]NetIP{k: {IPAddress: ip}, v: {IPAddress: s1}},
			Health:   health, RestartCount: port, Mounts: []Mount{{Type: k, Name: v, Source: s1, Destination: s2, Mode: ip, RW: rw}},
			Labels: map[string]string{k: v, v: k, s1: s2}, Command: s1 + s2}
		if rw {
			c.ExitCode = &code
		}
		encodedAlike(t, []Container{c, {}})
	})
}

func BenchmarkAppendContainersJSON(b *testing.B) {
	list := containersOf(b, engineLikeList(200))
	b.Run("AppendContainersJSON", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = AppendContainersJSON(buf[:0], list)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			if err := json.NewEncoder(&buf).Encode(list); err != nil {
				b.Fatal(err)
			}
		}
	})
}
