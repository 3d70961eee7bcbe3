package enginetest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Do sends one raw Engine API request (body encoded as JSON when not nil)
// to the local engine and returns the status and the whole body.
func Do(t testing.TB, method, path string, headers map[string]string, body any) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://engine"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("engine %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// Must is Do for a request that must answer want; the answer is decoded
// into out when out is not nil.
func Must(t testing.TB, want int, method, path string, headers map[string]string, body, out any) {
	t.Helper()
	code, data := Do(t, method, path, headers, body)
	if code != want {
		t.Fatalf("engine %s %s = %d %s, want %d", method, path, code, data, want)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("engine %s %s: %v", method, path, err)
		}
	}
}

// splitRef splits repository:tag.
func splitRef(ref string) (repo, tag string) {
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[:i], ref[i+1:]
	}
	return ref, "latest"
}

// BuildImage makes an image on the local engine from base, named ref
// (repository:tag) and labelled Label=label, with Dockerfile-style changes
// ("CMD [...]", "ENTRYPOINT [...]", "LABEL k=v"): the commit of a container
// that never ran. No registry or network is needed. It returns the image id.
func BuildImage(t testing.TB, base, ref, label string, changes ...string) string {
	t.Helper()
	var ct struct{ ID string }
	Must(t, http.StatusCreated, "POST", "/containers/create", nil, map[string]any{"Image": base, "Cmd": []string{"true"},
		"Labels": map[string]string{Label: label}}, &ct)
	defer Do(t, "DELETE", "/containers/"+ct.ID+"?force=1", nil, nil)
	repo, tag := splitRef(ref)
	q := url.Values{"container": {ct.ID}, "repo": {repo}, "tag": {tag}}
	for _, c := range append([]string{"LABEL " + Label + "=" + label}, changes...) {
		q.Add("changes", c)
	}
	var img struct{ ID string }
	Must(t, http.StatusCreated, "POST", "/commit?"+q.Encode(), nil, nil, &img)
	return img.ID
}

// TagImage names the local image id ref.
func TagImage(t testing.TB, id, ref string) {
	t.Helper()
	repo, tag := splitRef(ref)
	Must(t, http.StatusCreated, "POST", "/images/"+id+"/tag?"+url.Values{"repo": {repo}, "tag": {tag}}.Encode(), nil, nil, nil)
}

// ImageID returns the id of the local image ref names.
func ImageID(t testing.TB, ref string) string {
	t.Helper()
	var img struct{ ID string }
	Must(t, http.StatusOK, "GET", "/images/"+ref+"/json", nil, nil, &img)
	return img.ID
}

// RemoveImages force-removes local images (ids or names) when the test
// ends, after the containers labelled Label=label (which may use them).
func RemoveImages(t testing.TB, label string, images ...*string) {
	t.Cleanup(func() {
		RemoveLabelled(t, label)
		for _, img := range images {
			if *img != "" {
				Do(t, "DELETE", "/images/"+*img+"?force=1", nil, nil)
			}
		}
	})
}

// Push pushes the local image ref (registry host/name:tag) with the
// registry's credentials, returns the digest of the manifest pushed, and
// deletes that manifest from the registry when the test ends.
func Push(t testing.TB, ref, user, password string) string {
	t.Helper()
	repo, tag := splitRef(ref)
	host, name, _ := strings.Cut(repo, "/")
	auth, _ := json.Marshal(map[string]string{"username": user, "password": password, "serveraddress": host})
	code, data := Do(t, "POST", "/images/"+repo+"/push?tag="+url.QueryEscape(tag),
		map[string]string{"X-Registry-Auth": base64.URLEncoding.EncodeToString(auth)}, nil)
	if code != http.StatusOK || bytes.Contains(data, []byte(`"error"`)) {
		t.Fatalf("push %s = %d %s", ref, code, data)
	}
	var digest string
	for _, line := range bytes.Split(data, []byte("\n")) {
		var m struct{ Aux struct{ Digest string } }
		if json.Unmarshal(line, &m) == nil && m.Aux.Digest != "" {
			digest = m.Aux.Digest
		}
	}
	if digest == "" {
		t.Fatalf("push %s: no digest in %s", ref, data)
	}
	t.Cleanup(func() {
		req, _ := http.NewRequest("DELETE", "http://"+host+"/v2/"+name+"/manifests/"+digest, nil)
		req.SetBasicAuth(user, password)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	return digest
}
