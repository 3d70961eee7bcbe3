package api_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/apitest"
)

// pngImage encodes a w×h PNG.
func pngImage(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{R: 200, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// upload sends data to path with the given content type and returns the
// status and body.
func (h *harness) upload(method, path, contentType string, data []byte) (int, []byte) {
	h.t.Helper()
	req, _ := http.NewRequest(method, h.url+path, bytes.NewReader(data))
	req.Header.Set("Content-Type", contentType)
	resp, body := h.roundTrip(req)
	return resp.StatusCode, body
}

// fetch GETs path and returns the status, content type and body.
func (h *harness) fetch(path string) (int, http.Header, []byte) {
	h.t.Helper()
	req, _ := http.NewRequest("GET", h.url+path, nil)
	resp, body := h.roundTrip(req)
	return resp.StatusCode, resp.Header, body
}

// roundTrip sends req with the harness's headers and returns the response
// (closed) and its body.
func (h *harness) roundTrip(req *http.Request) (*http.Response, []byte) {
	h.t.Helper()
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

func multipartBody(t *testing.T, field, filename string, data []byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("note", "ignored")
	fw, err := w.CreateFormFile(field, filename)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write(data)
	_ = w.Close()
	return w.FormDataContentType(), buf.Bytes()
}

const goodSVG = `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="red"/></svg>`

func TestEnvironmentIconUploadServeReplaceAndDelete(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if status, body := h.do("GET", "/api/environments/1/icon", nil); status != 404 || !strings.Contains(string(body), "Icon not found") {
		t.Errorf("icon before any upload = %d %s", status, body)
	}
	pic := pngImage(t, 16, 16)
	ct, body := multipartBody(t, "icon", "icon.png", pic)
	status, out := h.upload("POST", "/api/environments/1/icon", ct, body)
	if status != 200 || !strings.Contains(string(out), `"contentType":"image/png"`) || !strings.Contains(string(out), `"url":"/api/environments/1/icon"`) {
		t.Fatalf("upload = %d %s", status, out)
	}
	status, hdr, got := h.fetch("/api/environments/1/icon")
	if status != 200 || hdr.Get("Content-Type") != "image/png" || !bytes.Equal(got, pic) || hdr.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("served icon = %d %v (%d bytes, want %d)", status, hdr, len(got), len(pic))
	}

	// Replaced by an SVG sent as a JSON data URL; the claimed type does
	// not matter, the content does.
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte(goodSVG))
	h.must(200, "POST", "/api/environments/1/icon", map[string]string{"icon": dataURL}, nil)
	status, hdr, got = h.fetch("/api/environments/1/icon")
	if status != 200 || hdr.Get("Content-Type") != "image/svg+xml" || string(got) != goodSVG ||
		!strings.Contains(hdr.Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("served SVG icon = %d %v %s", status, hdr, got)
	}

	// Bad uploads are refused and change nothing.
	huge := append(pngImage(t, 1, 1), make([]byte, 600<<10)...)
	for _, tc := range []struct {
		name, ct string
		data     []byte
		msg      string
	}{
		{"text", "text/plain", []byte("hello, not an image"), "must be a PNG, JPEG, SVG or WebP"},
		{"script svg", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), "scripts"},
		{"handler svg", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>`), "event handlers"},
		{"html", "image/svg+xml", []byte(`<html><body>x</body></html>`), "must be a PNG, JPEG, SVG or WebP"},
		{"truncated png", "image/png", pngImage(t, 4, 4)[:30], "cannot be read"},
		{"too large", "image/png", huge, "larger than 512 KB"},
		{"empty", "image/png", nil, "empty"},
		{"json without image", "application/json", []byte(`{"name":"x"}`), "An image file is required"},
		{"json bad base64", "application/json", []byte(`{"icon":"data:image/png;base64,@@@"}`), "not valid base64"},
	} {
		status, out := h.upload("POST", "/api/environments/1/icon", tc.ct, tc.data)
		if status != 400 || !strings.Contains(string(out), tc.msg) {
			t.Errorf("%s: upload = %d %s, want 400 %q", tc.name, status, out, tc.msg)
		}
	}
	if _, hdr, got := h.fetch("/api/environments/1/icon"); hdr.Get("Content-Type") != "image/svg+xml" || string(got) != goodSVG {
		t.Errorf("a refused upload changed the icon: %v", hdr)
	}

	if status, _ := h.upload("POST", "/api/environments/999/icon", "image/png", pic); status != 404 {
		t.Errorf("icon of an unknown environment = %d, want 404", status)
	}
	h.must(200, "DELETE", "/api/environments/1/icon", nil, nil)
	if status, _ := h.do("GET", "/api/environments/1/icon", nil); status != 404 {
		t.Errorf("icon after delete = %d, want 404", status)
	}
	if status, _ := h.do("DELETE", "/api/environments/1/icon", nil); status != 404 {
		t.Errorf("second delete = %d, want 404", status)
	}

	// An environment's icon goes with it.
	var env struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "iconed-" + h.label, "connectionType": "direct",
		"host": "127.0.0.1", "port": closedPort(t)}, &env)
	path := fmt.Sprintf("/api/environments/%d/icon", env.ID)
	if status, out := h.upload("POST", path, "image/png", pic); status != 200 {
		t.Fatalf("raw upload = %d %s", status, out)
	}
	h.must(200, "DELETE", fmt.Sprintf("/api/environments/%d", env.ID), nil, nil)
	var rows int
	if err := h.store.DB().QueryRow("SELECT count(*) FROM environment_icons WHERE environment_id = ?", env.ID).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("icon rows of a deleted environment = %d (%v)", rows, err)
	}
}

func TestProfileAvatarIsTheSignedInUsers(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	admin := h.login(user, pw)
	h.as(admin)
	h.must(201, "POST", "/api/users", map[string]any{"username": "other", "password": "other-password-1"}, nil)

	pic := pngImage(t, 32, 32)
	if status, out := h.upload("POST", "/api/profile/avatar", "image/png", pic); status != 200 {
		t.Fatalf("avatar upload = %d %s", status, out)
	}
	status, hdr, got := h.fetch("/api/profile/avatar")
	if status != 200 || hdr.Get("Content-Type") != "image/png" || !bytes.Equal(got, pic) {
		t.Errorf("avatar = %d %v", status, hdr)
	}
	// Another user has none of their own.
	h.as(h.login("other", "other-password-1"))
	if status, _ := h.do("GET", "/api/profile/avatar", nil); status != 404 {
		t.Errorf("other user's avatar = %d, want 404", status)
	}
	if status, _ := h.do("DELETE", "/api/profile/avatar", nil); status != 404 {
		t.Errorf("other user's delete = %d, want 404", status)
	}
	if status, out := h.upload("POST", "/api/profile/avatar", "image/gif", []byte("GIF89a\x01\x00\x01\x00")); status != 400 {
		t.Errorf("GIF avatar = %d %s, want 400", status, out)
	}
	h.headers = map[string]string{}
	if status, _ := h.do("GET", "/api/profile/avatar", nil); status != 401 {
		t.Errorf("avatar without sign-in = %d, want 401", status)
	}
	h.as(admin)
	h.must(200, "DELETE", "/api/profile/avatar", nil, nil)
	if status, _ := h.do("GET", "/api/profile/avatar", nil); status != 404 {
		t.Errorf("avatar after delete = %d, want 404", status)
	}
}
