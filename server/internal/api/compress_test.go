package api_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// getRaw requests path through the whole server with the given
// Accept-Encoding, over a transport that neither asks for nor undoes gzip.
func (h *harness) getRaw(path, acceptEncoding string) (*http.Response, []byte) {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, h.url+path, nil)
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp, body
}

func TestJSONListsAreGzippedWhenTheClientAcceptsIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const path = "/api/roles" // the built-in roles with their permissions: several KB of JSON
	plainResp, plain := h.getRaw(path, "")
	if plainResp.StatusCode != 200 || plainResp.Header.Get("Content-Encoding") != "" || len(plain) <= 1024 || !json.Valid(plain) {
		t.Fatalf("plain: %d, encoding %q, %d bytes", plainResp.StatusCode, plainResp.Header.Get("Content-Encoding"), len(plain))
	}
	resp, zipped := h.getRaw(path, "gzip")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("with Accept-Encoding gzip: %d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(unzipped, plain) {
		t.Errorf("gunzipped body differs from the plain one:\n%s\n%s", unzipped, plain)
	}
	if len(zipped) >= len(plain)/2 {
		t.Errorf("gzip sent %d bytes for %d", len(zipped), len(plain))
	}
	if v := resp.Header.Get("Vary"); v != "Accept-Encoding" {
		t.Errorf("Vary = %q, want Accept-Encoding", v)
	}
	// A small answer stays plain.
	small, body := h.getRaw("/api/health", "gzip")
	if small.Header.Get("Content-Encoding") != "" || !json.Valid(body) {
		t.Errorf("/api/health with gzip accepted: Content-Encoding %q, body %q", small.Header.Get("Content-Encoding"), body)
	}
}
