package api_test

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/shared/enginetest"
)

// fillVolume creates the labelled volume name and runs script (sh) in a
// labelled container that mounts it at /d.
func fillVolume(t *testing.T, label, name, script string) {
	t.Helper()
	enginetest.Must(t, 201, "POST", "/volumes/create", nil,
		map[string]any{"Name": name, "Labels": map[string]string{enginetest.Label: label}}, nil)
	var ct struct{ Id string }
	enginetest.Must(t, 201, "POST", "/containers/create", nil, map[string]any{
		"Image": enginetest.Image(), "Cmd": []string{"sh", "-c", script},
		"Labels":     map[string]string{enginetest.Label: label},
		"HostConfig": map[string]any{"Binds": []string{name + ":/d"}},
	}, &ct)
	defer enginetest.Do(t, "DELETE", "/containers/"+ct.Id+"?force=1", nil, nil)
	enginetest.Must(t, 204, "POST", "/containers/"+ct.Id+"/start", nil, nil, nil)
	var w struct{ StatusCode int }
	enginetest.Must(t, 200, "POST", "/containers/"+ct.Id+"/wait", nil, nil, &w)
	if w.StatusCode != 0 {
		t.Fatalf("filling %s: exit %d", name, w.StatusCode)
	}
}

// volumeHelpers returns the ids of Berth's helper containers on volume.
func volumeHelpers(t *testing.T, volume string) []string {
	t.Helper()
	f, _ := json.Marshal(map[string][]string{"label": {"berth.helper.volume=" + volume}})
	var list []struct{ Id string }
	enginetest.Must(t, 200, "GET", "/containers/json?all=1&filters="+url.QueryEscape(string(f)), nil, nil, &list)
	ids := []string{}
	for _, c := range list {
		ids = append(ids, c.Id)
	}
	return ids
}

// removeHelpersAtCleanup removes whatever helper of the volumes is left.
func removeHelpersAtCleanup(t *testing.T, volumes ...string) {
	t.Cleanup(func() {
		for _, v := range volumes {
			for _, id := range volumeHelpers(t, v) {
				enginetest.Do(t, "DELETE", "/containers/"+id+"?force=1", nil, nil)
			}
		}
	})
}

type entryJSON struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Size       int64  `json:"size"`
	Mode       string `json:"mode"`
	Modified   string `json:"modified"`
	LinkTarget string `json:"linkTarget"`
}

type listingJSON struct {
	Path    string      `json:"path"`
	Entries []entryJSON `json:"entries"`
}

const fillScript = `set -e; printf 'hello\nworld\n' > /d/hello.txt; mkdir -p /d/sub/deeper; echo nested > /d/sub/deeper/n.txt
printf 'a\000b' > /d/bin.dat; ln -s hello.txt /d/link; ln -s /etc /d/escape; ln -s /berth-nowhere /d/gone; ln -s ../../x /d/climb; echo hidden > /d/.hidden; echo 'sp ace' > '/d/with space.txt'
chmod 600 /d/hello.txt`

func TestVolumeBrowseListsReadsAndRefuses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	vol := "berth-browse-" + h.label
	removeHelpersAtCleanup(t, vol)
	fillVolume(t, h.label, vol, fillScript)
	base := "/api/volumes/" + vol + "/browse"

	var root listingJSON
	h.must(200, "GET", base+"?env=1", nil, &root)
	if root.Path != "/" {
		t.Errorf("path = %q, want /", root.Path)
	}
	got := map[string]entryJSON{}
	var names []string
	for _, e := range root.Entries {
		got[e.Name] = e
		names = append(names, e.Name)
		if e.Modified == "" {
			t.Errorf("%s: no modified time", e.Name)
		}
	}
	sort.Strings(names)
	if diff := cmp.Diff([]string{".hidden", "bin.dat", "climb", "escape", "gone", "hello.txt", "link", "sub", "with space.txt"}, names); diff != "" {
		t.Fatalf("root entries (-want +got):\n%s", diff)
	}
	want := map[string]entryJSON{
		"hello.txt": {Name: "hello.txt", Type: "file", Size: 12, Mode: "-rw-------"},
		"sub":       {Name: "sub", Type: "directory", Size: 0, Mode: "drwxr-xr-x"},
		"link":      {Name: "link", Type: "symlink", Size: 9, Mode: "Lrwxrwxrwx", LinkTarget: "hello.txt"},
		"escape":    {Name: "escape", Type: "symlink", Size: 4, Mode: "Lrwxrwxrwx", LinkTarget: "/etc"},
	}
	for name, w := range want {
		g := got[name]
		g.Modified = ""
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}

	var sub listingJSON
	h.must(200, "GET", base+"?env=1&path="+url.QueryEscape("sub//./deeper/"), nil, &sub)
	if sub.Path != "/sub/deeper" || len(sub.Entries) != 1 || sub.Entries[0].Name != "n.txt" {
		t.Errorf("sub/deeper = %+v, want /sub/deeper with n.txt", sub)
	}

	var content struct {
		Path    string `json:"path"`
		Size    int64  `json:"size"`
		Content string `json:"content"`
	}
	h.must(200, "GET", base+"/content?env=1&path="+url.QueryEscape("/hello.txt"), nil, &content)
	if content.Content != "hello\nworld\n" || content.Size != 12 || content.Path != "/hello.txt" {
		t.Errorf("content = %+v", content)
	}
	h.must(200, "GET", base+"/content?env=1&path=link", nil, &content)
	if content.Content != "hello\nworld\n" {
		t.Errorf("through the link: %q", content.Content)
	}

	refusals := []struct {
		path, query string
		status      int
		message     string
	}{
		{"/content", "bin.dat", 400, "File is binary and cannot be shown as text"},
		{"/content", "sub", 400, "Path is a directory"},
		{"/content", "missing.txt", 404, "Path not found"},
		{"", "hello.txt", 400, "Path is not a directory"},
		{"", "../../etc", 400, "Path must stay inside the volume"},
		{"/content", "sub/../../../etc/passwd", 400, "Path must stay inside the volume"},
		// A link out of the volume is refused on its text alone, the same
		// whether its target exists in the helper's filesystem or not.
		{"", "escape", 400, "Path escapes the volume"},
		{"/content", "escape/passwd", 400, "Path escapes the volume"},
		{"/content", "gone", 400, "Path escapes the volume"},
		{"", "climb", 400, "Path escapes the volume"},
		{"/content", "climb", 400, "Path escapes the volume"},
		{"", "nowhere", 404, "Path not found"},
	}
	for _, r := range refusals {
		status, body := h.do("GET", base+r.path+"?env=1&path="+url.QueryEscape(r.query), nil)
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		if status != r.status || e.Error != r.message {
			t.Errorf("%s?path=%s = %d %s, want %d %q", r.path, r.query, status, body, r.status, r.message)
		}
	}
	status, _ := h.do("GET", "/api/volumes/berth-none-"+h.label+"/browse?env=1", nil)
	if status != 404 {
		t.Errorf("browse of a missing volume = %d, want 404", status)
	}

	// One helper serves every read, and release removes it at once.
	helpers := volumeHelpers(t, vol)
	if len(helpers) != 1 {
		t.Fatalf("helpers of %s = %v, want one", vol, helpers)
	}
	var rel struct {
		Success  bool `json:"success"`
		Released bool `json:"released"`
	}
	h.must(200, "POST", base+"/release?env=1", nil, &rel)
	if !rel.Success || !rel.Released {
		t.Errorf("release = %+v", rel)
	}
	if left := volumeHelpers(t, vol); len(left) != 0 {
		t.Errorf("helpers after release = %v, want none", left)
	}
	h.must(200, "POST", base+"/release?env=1", nil, &rel)
	if rel.Released {
		t.Errorf("second release released something")
	}
}

// tarNames reads a tar stream and returns its entries' names and the
// content of its regular files.
func tarNames(t *testing.T, r io.Reader) (map[string]byte, map[string]string) {
	t.Helper()
	types, files := map[string]byte{}, map[string]string{}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return types, files
		}
		if err != nil {
			t.Fatal(err)
		}
		types[hdr.Name] = hdr.Typeflag
		if hdr.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[hdr.Name] = string(b)
		}
	}
}

func TestVolumeCloneCopiesContentAndExportStreamsIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	src, dst := "berth-src-"+h.label, "berth-dst-"+h.label
	removeHelpersAtCleanup(t, src, dst)
	fillVolume(t, h.label, src, fillScript)

	var out struct {
		Success bool   `json:"success"`
		Name    string `json:"name"`
	}
	h.must(200, "POST", "/api/volumes/"+src+"/clone?env=1", map[string]string{"name": dst}, &out)
	if !out.Success || out.Name != dst {
		t.Fatalf("clone = %+v", out)
	}
	var v volumeJSON
	h.must(200, "GET", "/api/volumes/"+dst+"?env=1", nil, &v)
	if v.Labels == nil || (*v.Labels)["berth.clone-of"] != src || (*v.Labels)[enginetest.Label] != h.label {
		t.Errorf("clone labels = %v, want the source's and berth.clone-of=%s", v.Labels, src)
	}
	var content struct {
		Content string `json:"content"`
	}
	h.must(200, "GET", "/api/volumes/"+dst+"/browse/content?env=1&path=sub/deeper/n.txt", nil, &content)
	if content.Content != "nested\n" {
		t.Errorf("clone's sub/deeper/n.txt = %q", content.Content)
	}
	var l listingJSON
	h.must(200, "GET", "/api/volumes/"+dst+"/browse?env=1", nil, &l)
	for _, e := range l.Entries {
		if e.Name == "hello.txt" && e.Mode != "-rw-------" {
			t.Errorf("clone's hello.txt mode = %s, want -rw------- (kept)", e.Mode)
		}
		if e.Name == "link" && e.LinkTarget != "hello.txt" {
			t.Errorf("clone's link = %+v", e)
		}
	}
	h.must(200, "POST", "/api/volumes/"+dst+"/browse/release?env=1", nil, nil)

	// Refusals: an existing target, a missing source, a bad name.
	for _, c := range []struct {
		source, name string
		status       int
	}{{src, dst, 409}, {"berth-none-" + h.label, "berth-x-" + h.label, 404}, {src, "", 400}, {src, "bad/name", 400}} {
		if status, body := h.do("POST", "/api/volumes/"+c.source+"/clone?env=1", map[string]string{"name": c.name}); status != c.status {
			t.Errorf("clone %s → %q = %d %s, want %d", c.source, c.name, status, body, c.status)
		}
	}
	if status, _ := h.do("GET", "/api/volumes/berth-x-"+h.label+"?env=1", nil); status != 404 {
		t.Errorf("a refused clone left a volume behind")
	}

	for _, gz := range []bool{false, true} {
		q := ""
		if gz {
			q = "&compress=gzip"
		}
		resp, err := h.http.Get(h.url + "/api/volumes/" + src + "/export?env=1" + q)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("export = %d %s", resp.StatusCode, b)
		}
		wantName := `attachment; filename="` + src + `.tar"`
		var body io.Reader = resp.Body
		if gz {
			wantName = `attachment; filename="` + src + `.tar.gz"`
			body = gunzip(t, resp.Body)
		}
		if cd := resp.Header.Get("Content-Disposition"); cd != wantName {
			t.Errorf("Content-Disposition = %q, want %q", cd, wantName)
		}
		types, files := tarNames(t, body)
		resp.Body.Close()
		if files["./hello.txt"] != "hello\nworld\n" || files["./sub/deeper/n.txt"] != "nested\n" || types["./link"] != tar.TypeSymlink {
			t.Errorf("export (gzip %v): types %v files %v", gz, types, files)
		}
	}
	if left := volumeHelpers(t, src); len(left) != 0 {
		t.Errorf("helpers after export = %v, want none", left)
	}
	if status, _ := h.do("GET", "/api/volumes/"+src+"/export?env=1&compress=zip", nil); status != 400 {
		t.Errorf("compress=zip = %d, want 400", status)
	}
}

func TestImageExportIsALoadableTar(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ref := enginetest.Image()
	for _, compress := range []string{"", "false", "true"} {
		t.Run("compress="+compress, func(t *testing.T) {
			checkImageExport(t, h, ref, compress)
		})
	}
	status, body := h.do("GET", "/api/images/berth-none-"+h.label+"/export?env=1", nil)
	if status != http.StatusNotFound || !strings.Contains(string(body), "Image not found") {
		t.Errorf("export of a missing image = %d %s, want 404 Image not found", status, body)
	}
	status, body = h.do("GET", "/api/images/"+url.PathEscape(ref)+"/export?env=1&compress=zip", nil)
	if status != http.StatusBadRequest || !strings.Contains(string(body), "compress must be true or false") {
		t.Errorf("compress=zip = %d %s, want 400", status, body)
	}
}

// checkImageExport downloads ref with ?compress=compress and checks the
// answer is docker save's tar of it (gzipped for compress=true), named so.
func checkImageExport(t *testing.T, h *harness, ref, compress string) {
	t.Helper()
	resp, err := h.http.Get(h.url + "/api/images/" + url.PathEscape(ref) + "/export?env=1&compress=" + compress)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("export = %d %s", resp.StatusCode, b)
	}
	wantFile, wantType := strings.NewReplacer("/", "_", ":", "_").Replace(ref)+".tar", "application/x-tar"
	var body io.Reader = resp.Body
	if compress == "true" {
		wantFile, wantType = wantFile+".gz", "application/gzip"
		body = gunzip(t, resp.Body)
	}
	if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename="`+wantFile+`"` {
		t.Errorf("Content-Disposition = %q, want file %s", cd, wantFile)
	}
	if ct := resp.Header.Get("Content-Type"); ct != wantType {
		t.Errorf("Content-Type = %q, want %s", ct, wantType)
	}
	tr := tar.NewReader(body)
	var manifest []struct {
		RepoTags []string
		Layers   []string
	}
	names := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names[hdr.Name] = true
		if hdr.Name == "manifest.json" {
			if err := json.NewDecoder(tr).Decode(&manifest); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(manifest) != 1 || !slices.Contains(manifest[0].RepoTags, ref) || len(manifest[0].Layers) == 0 {
		t.Fatalf("manifest.json = %+v, want one image tagged %s with layers", manifest, ref)
	}
	for _, l := range manifest[0].Layers {
		if !names[l] {
			t.Errorf("layer %s of the manifest is not in the tar", l)
		}
	}
}

func gunzip(t *testing.T, r io.Reader) io.Reader {
	t.Helper()
	zr, err := gzip.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

func TestVolumeExportHelperIsRemovedWhenTheClientLeaves(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	vol := "berth-leave-" + h.label
	removeHelpersAtCleanup(t, vol)
	fillVolume(t, h.label, vol, "dd if=/dev/zero of=/d/big bs=1048576 count=128 2>/dev/null")
	resp, err := h.http.Get(h.url + "/api/volumes/" + vol + "/export?env=1")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("export = %d", resp.StatusCode)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if n := len(volumeHelpers(t, vol)); n != 1 {
		t.Errorf("helpers while exporting = %d, want 1", n)
	}
	resp.Body.Close() // the client leaves halfway
	deadline := time.Now().Add(time.Minute)
	for len(volumeHelpers(t, vol)) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the export helper of %s is still there a minute after the client left", vol)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestVolumeExportReadsPathAndFormat: the reference's ?path (a sub-path,
// confined to the volume) and ?format (tar, tar.gz, raw) are read.
func TestVolumeExportReadsPathAndFormat(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	vol := "berth-exp-" + h.label
	removeHelpersAtCleanup(t, vol)
	fillVolume(t, h.label, vol, fillScript)
	get := func(query string) (*http.Response, []byte) {
		t.Helper()
		resp, err := h.http.Get(h.url + "/api/volumes/" + vol + "/export?env=1&" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("export %s = %d %s", query, resp.StatusCode, b)
		}
		return resp, b
	}
	check := func(query, wantType, wantFile string, gz bool, wantFiles map[string]string) {
		t.Helper()
		resp, b := get(query)
		if ct := resp.Header.Get("Content-Type"); ct != wantType {
			t.Errorf("%s: Content-Type = %q, want %q", query, ct, wantType)
		}
		if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename="`+wantFile+`"` {
			t.Errorf("%s: Content-Disposition = %q, want file %s", query, cd, wantFile)
		}
		var r io.Reader = strings.NewReader(string(b))
		if gz {
			r = gunzip(t, r)
		}
		if _, files := tarNames(t, r); !cmp.Equal(files, wantFiles) {
			t.Errorf("%s: files %v, want %v", query, files, wantFiles)
		}
	}
	sub := map[string]string{"./deeper/n.txt": "nested\n"}
	check("path=sub", "application/x-tar", vol+"-sub.tar", false, sub)
	check("path=/sub/&format=tar", "application/x-tar", vol+"-sub.tar", false, sub)
	check("path=sub&format=tar.gz", "application/gzip", vol+"-sub.tar.gz", true, sub)
	check("path=sub&compress=gzip&format=tar.gz", "application/gzip", vol+"-sub.tar.gz", true, sub)
	check("path=sub/deeper&format=raw", "application/x-tar", vol+"-sub-deeper.tar", false, map[string]string{"./n.txt": "nested\n"})
	check("path=hello.txt", "application/x-tar", vol+"-hello.txt.tar", false, map[string]string{"hello.txt": "hello\nworld\n"})

	for _, p := range []string{"hello.txt", "/link"} {
		resp, b := get("format=raw&path=" + p)
		if string(b) != "hello\nworld\n" || resp.Header.Get("Content-Type") != "application/octet-stream" {
			t.Errorf("raw %s = %q (%s), want hello.txt's bytes", p, b, resp.Header.Get("Content-Type"))
		}
		if cd, want := resp.Header.Get("Content-Disposition"), `attachment; filename="`+strings.TrimPrefix(p, "/")+`"`; cd != want {
			t.Errorf("raw %s: Content-Disposition = %q, want %q", p, cd, want)
		}
	}

	base := "/api/volumes/" + vol + "/export?env=1&"
	h.expectRefusals([]refusal{
		{"climbs out", "GET", base + "path=../x", nil, 400, "Path must stay inside the volume"},
		{"climbs out after a directory", "GET", base + "path=sub/../../x", nil, 400, "Path must stay inside the volume"},
		{"an absolute link out", "GET", base + "path=escape", nil, 400, "Path escapes the volume"},
		{"through an absolute link", "GET", base + "path=escape/passwd&format=raw", nil, 400, "Path escapes the volume"},
		{"a climbing link", "GET", base + "path=climb", nil, 400, "Path escapes the volume"},
		{"the engine's /etc is the volume's", "GET", base + "path=/etc/passwd&format=raw", nil, 404, "Path not found"},
		{"missing", "GET", base + "path=nothing", nil, 404, "Path not found"},
		{"unknown format", "GET", base + "format=zip", nil, 400, "format must be tar, tar.gz or raw"},
		{"format and compress disagree", "GET", base + "format=tar&compress=gzip", nil, 400, "format and compress disagree"},
	})
}
