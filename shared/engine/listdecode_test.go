package engine

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/berth-dev/berth/shared/enginetest"
)

// engineLikeList is a list of n entries in the shape the engine answers
// (Docker 20.10 to 28), with members listDecoder skips and every kind of
// member it reads.
func engineLikeList(n int) []byte {
	var b bytes.Buffer
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"Id":"%064x","Names":["/bench-%d"],"Image":"berth-bench:latest","ImageID":"sha256:%064x",`+
			`"Command":"sh -c 'sleep 1 \u0026\u0026 exec sleep 3600'","Created":17000000%02d,`+
			`"Ports":[{"IP":"0.0.0.0","PrivatePort":80,"PublicPort":%d,"Type":"tcp"},{"PrivatePort":443,"Type":"tcp"}],`+
			`"Labels":{"berth.bench":"1","com.docker.compose.project":"bench","note":"caf\u00e9 ✓ \u003cb\u003e"},`+
			`"State":"running","Status":"Up 5 minutes (healthy)","HostConfig":{"NetworkMode":"default"},`+
			`"Health":{"Status":"healthy","FailingStreak":0},`+
			`"NetworkSettings":{"Networks":{"bridge":{"IPAMConfig":null,"Links":null,"Aliases":null,"NetworkID":"%064x",`+
			`"EndpointID":"%064x","Gateway":"172.17.0.1","IPAddress":"172.17.%d.%d","IPPrefixLen":16,"IPv6Gateway":"",`+
			`"GlobalIPv6Address":"","GlobalIPv6PrefixLen":0,"MacAddress":"02:42:ac:11:00:02","DriverOpts":null}}},`+
			`"Mounts":[{"Type":"volume","Name":"data","Source":"/var/lib/docker/volumes/data/_data","Destination":"/data",`+
			`"Driver":"local","Mode":"z","RW":true,"Propagation":""}]}`,
			i*7919, i, i*31, i%100, 8000+i, 77, i*13, i/250, i%250+2)
	}
	b.WriteString("]")
	return b.Bytes()
}

// decodedAlike fails t unless listDecoder either gives up on body or
// decodes exactly what encoding/json does, without error.
func decodedAlike(t *testing.T, body []byte) (fast bool) {
	t.Helper()
	got, ok := fastListItems(body)
	if !ok {
		return false
	}
	var want []listItem
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatalf("listDecoder read %q, which encoding/json refuses: %v", body, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("listDecoder read %q as\n%#v\nencoding/json as\n%#v", body, got, want)
	}
	return true
}

func TestListDecoderReadsWhatEncodingJSONReads(t *testing.T) {
	for _, body := range []string{
		string(engineLikeList(3)), `[]`, `null`, ` [ ] `, `[null]`, `[{}]`,
		`[{"Names":null,"Ports":null,"Labels":null,"Mounts":null,"Health":null,"NetworkSettings":null}]`,
		`[{"Names":[],"Ports":[],"Labels":{},"Mounts":[],"NetworkSettings":{"Networks":{}}}]`,
		`[{"Names":[null,"/a"],"Ports":[null],"Labels":{"a":null},"NetworkSettings":{"Networks":{"n":null}}}]`,
		`[{"Id":null,"Created":null,"Mounts":[{"RW":null},{"RW":false},{"RW":true}]}]`,
		`[{"Id":"\ud83d\ude00 \ud83d x \udc00 \u0041\/\b\f\n\r\t\"\\"}]`,
		"[{\"Id\":\"\xff\xfe bad \xe2\x82 utf8\"}]",
		`[{"Created":-9223372036854775808},{"Created":9223372036854775807},{"Created":-0}]`,
		`[{"Other":[1,-2.5e+3,0.0,true,false,null,{"a":[{}]},"s"]}]`,
		`[{"I\u0064":"x"}]`,
	} {
		if !decodedAlike(t, []byte(body)) {
			t.Errorf("listDecoder gave up on %q, which it should read", body)
		}
	}
	// What it leaves to encoding/json: repeated or case-folded members,
	// other types, invalid JSON, numbers beyond int64 or with a fraction.
	for _, body := range []string{
		``, `{}`, `[`, `[{]`, `[{"Id":"a","Id":"b"}]`, `[{"id":"a"}]`, `[{"ID":"a"}]`, `[{"Id":"a","ID":"b"}]`,
		`[{"ſtate":"x"}]`, `[{"Id":1}]`, `[{"Names":"a"}]`, `[{"Names":[1]}]`, `[{"Created":1.5}]`,
		`[{"Created":1e3}]`, `[{"Created":9223372036854775808}]`, `[{"Created":-9223372036854775809}]`,
		`[{"Created":01}]`, `[{"Mounts":[{"RW":"true"}]}]`, `[{"Labels":{"a":1}}]`, `[1]`, `[{}]x`,
		`[{"Id":"a` + "\x01" + `"}]`, `[{"Id":"\x"}]`, `[{"Id":"\u12"}]`, `[{"Other":tru}]`, `[{"Other":-}]`,
		`[{"Other":1.}]`, `[{"Other":1e}]`, `[{},]`, `[{"a":1,}]`, `[{"a" 1}]`,
		`[{"Other":` + strings.Repeat("[", maxSkipDepth+1) + strings.Repeat("]", maxSkipDepth+1) + `}]`,
	} {
		if decodedAlike(t, []byte(body)) {
			t.Errorf("listDecoder read %q, which it should leave to encoding/json", body)
		}
		if _, err := decodeListItems([]byte(body)); (json.Unmarshal([]byte(body), new([]listItem)) == nil) != (err == nil) {
			t.Errorf("decodeListItems(%q) = %v, not encoding/json's answer", body, err)
		}
	}
}

// TestListDecoderReadsTheEngineItself decodes the local engine's own list
// of containers of every kind the list describes: listDecoder must read it
// (not leave it to encoding/json) and read what encoding/json reads.
func TestListDecoderReadsTheEngineItself(t *testing.T) {
	enginetest.Require(t)
	label := "listdecode-" + strings.ToLower(rand.Text()[:10])
	t.Cleanup(func() { enginetest.RemoveLabelled(t, label) })
	labels := map[string]string{enginetest.Label: label, "note": `a && b <c> "d" café ✓ ` + "\u2028", "empty": ""}
	var running struct {
		ID string `json:"Id"`
	}
	enginetest.Must(t, http.StatusCreated, http.MethodPost, "/containers/create", nil, map[string]any{
		"Image": enginetest.Image(), "Cmd": []string{"sh", "-c", "sleep 1 && exec sleep 300"}, "Labels": labels,
		"ExposedPorts": map[string]any{"80/tcp": map[string]any{}, "53/udp": map[string]any{}},
		"Healthcheck":  map[string]any{"Test": []string{"CMD", "true"}, "Interval": 1e9},
		"HostConfig": map[string]any{"PortBindings": map[string]any{"80/tcp": []map[string]string{{"HostIp": "127.0.0.1"}}},
			"Binds": []string{"/tmp:/host-tmp:ro"}, "Tmpfs": map[string]string{"/scratch": ""}},
	}, &running)
	enginetest.Must(t, http.StatusNoContent, http.MethodPost, "/containers/"+running.ID+"/start", nil, nil, nil)
	enginetest.Must(t, http.StatusCreated, http.MethodPost, "/containers/create", nil, map[string]any{
		"Image": enginetest.Image(), "Cmd": []string{"true"}, "Labels": labels, "NetworkDisabled": true,
	}, nil)

	filters, _ := json.Marshal(map[string][]string{"label": {enginetest.Label + "=" + label}})
	code, body := enginetest.Do(t, http.MethodGet, "/containers/json?all=1&filters="+url.QueryEscape(string(filters)), nil, nil)
	if code != http.StatusOK {
		t.Fatalf("engine list = %d %s", code, body)
	}
	if !decodedAlike(t, body) {
		t.Fatalf("listDecoder gave up on the engine's own list:\n%s", body)
	}
	items, _ := fastListItems(body)
	if len(items) != 2 {
		t.Fatalf("read %d containers, want 2:\n%s", len(items), body)
	}
	for _, it := range items {
		if it.Labels["note"] != labels["note"] {
			t.Errorf("label note = %q, want %q", it.Labels["note"], labels["note"])
		}
	}
}

func FuzzListDecoder(f *testing.F) {
	f.Add(engineLikeList(2))
	for _, s := range []string{`[{"Id":"\ud83d\ude00","Names":["/a"],"Ports":[{"PrivatePort":1}]}]`, `[null,{}]`,
		`[{"Labels":{"a":"b","a":"c"},"NetworkSettings":{"Networks":{"x":{"IPAddress":"::1"}}}}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		decodedAlike(t, body)
	})
}

func BenchmarkListDecode(b *testing.B) {
	body := engineLikeList(200)
	b.Run("listDecoder", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, ok := fastListItems(body); !ok {
				b.Fatal("gave up")
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var items []listItem
			if err := json.Unmarshal(body, &items); err != nil {
				b.Fatal(err)
			}
		}
	})
}
