package api_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/shared/enginetest"
)

// fileEntry is an entry of a directory listing.
type fbEntry struct {
	Name        string `json:"name"`
	Path        string `json:"path"`
	Type        string `json:"type"`
	Size        int64  `json:"size"`
	Mode        string `json:"mode"`
	Permissions string `json:"permissions"`
	LinkTarget  string `json:"linkTarget"`
	UID         int    `json:"uid"`
}

func fbURL(id, op string, q ...string) string {
	u := "/api/containers/" + id + "/files"
	if op != "" {
		u += "/" + op
	}
	u += "?env=1"
	for i := 0; i+1 < len(q); i += 2 {
		u += "&" + q[i] + "=" + url.QueryEscape(q[i+1])
	}
	return u
}

// listDir lists dir of container id through Berth, by name.
func (h *harness) fbList(id, dir string) map[string]fbEntry {
	h.t.Helper()
	var l struct {
		Path    string    `json:"path"`
		Entries []fbEntry `json:"entries"`
	}
	h.must(200, "GET", fbURL(id, "", "path", dir), nil, &l)
	out := map[string]fbEntry{}
	for _, e := range l.Entries {
		out[e.Name] = e
	}
	return out
}

// readFile reads a text file of container id through Berth.
func (h *harness) fbRead(id, p string) string {
	h.t.Helper()
	var ct struct {
		Content string `json:"content"`
	}
	h.must(200, "GET", fbURL(id, "content", "path", p), nil, &ct)
	return ct.Content
}

// upload sends files (name → content) to dir of container id as multipart.
func (h *harness) fbUpload(id, dir string, files map[string][]byte) (int, []byte) {
	h.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w, err := mw.CreateFormFile("file", n)
		if err != nil {
			h.t.Fatal(err)
		}
		_, _ = w.Write(files[n])
	}
	_ = mw.Close()
	req, _ := http.NewRequest("POST", h.url+fbURL(id, "upload", "path", dir), &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// download fetches p as tar through Berth and returns its regular files and
// directories (name → content; directories end in "/").
func (h *harness) fbDownload(id, p string) map[string]string {
	h.t.Helper()
	return h.fbDownloadAs(id, p, "")
}

// fbDownloadAs is fbDownload in an archive format ("" for the default,
// "tar" or "tar.gz").
func (h *harness) fbDownloadAs(id, p, format string) map[string]string {
	h.t.Helper()
	u, media := h.url+fbURL(id, "download", "path", p), "application/x-tar"
	if format != "" {
		u += "&format=" + format
	}
	if format == "tar.gz" {
		media = "application/gzip"
	}
	resp, err := h.http.Get(u)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != media {
		b, _ := io.ReadAll(resp.Body)
		h.t.Fatalf("download %s as %q = %d %s %s", p, format, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var body io.Reader = resp.Body
	if format == "tar.gz" {
		if !strings.Contains(resp.Header.Get("Content-Disposition"), ".tar.gz") {
			h.t.Errorf("download as tar.gz: Content-Disposition %q", resp.Header.Get("Content-Disposition"))
		}
		gz, err := gzip.NewReader(resp.Body)
		if err != nil {
			h.t.Fatalf("download as tar.gz is not gzip: %v", err)
		}
		body = gz
	}
	out := map[string]string{}
	tr := tar.NewReader(body)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			h.t.Fatal(err)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			out[strings.TrimSuffix(hdr.Name, "/")+"/"] = ""
		case tar.TypeReg:
			b, _ := io.ReadAll(tr)
			out[hdr.Name] = string(b)
		}
	}
}

// putTar extracts entries into dir of container id straight through the
// engine (to plant links and owners Berth itself would not create).
func fbPutTar(t *testing.T, id, dir string, entries ...*tar.Header) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		if err := tw.WriteHeader(e); err != nil {
			t.Fatal(err)
		}
		if e.Size > 0 {
			_, _ = tw.Write(bytes.Repeat([]byte("x"), int(e.Size)))
		}
	}
	_ = tw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "PUT", "http://engine/containers/"+id+"/archive?path="+url.QueryEscape(dir), &buf)
	req.Header.Set("Content-Type", "application/x-tar")
	resp, err := enginetest.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("put archive: %d %s", resp.StatusCode, b)
	}
}

func fbError(t *testing.T, data []byte) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return e.Error
}

// mustFail sends a request that must answer want with an error containing msg.
func (h *harness) fbMustFail(want int, msg, method, path string, body any) {
	h.t.Helper()
	status, data := h.do(method, path, body)
	if status != want || !strings.Contains(fbError(h.t, data), msg) {
		h.t.Fatalf("%s %s = %d %s, want %d with %q", method, path, status, data, want, msg)
	}
}

func TestContainerFilesRoundTripOnRunningAndStoppedContainers(t *testing.T) {
	h := newHarness(t)
	for _, running := range []bool{true, false} {
		name := map[bool]string{true: "running", false: "stopped"}[running]
		t.Run(name, func(t *testing.T) {
			h := *h
			h.t = t
			id := h.createContainer("berth-files-"+name+"-"+h.label, running, "sleep", "3600")
			if got := h.inspectState(id).Running; got != running {
				t.Fatalf("running = %v, want %v", got, running)
			}
			dir := "/tmp/work"
			h.must(200, "POST", fbURL(id, "create"), map[string]any{"path": "/tmp/../tmp/work", "type": "directory"}, nil)
			h.must(200, "POST", fbURL(id, "create"), map[string]any{"path": dir + "/a.txt"}, nil)
			h.fbMustFail(409, "already exists", "POST", fbURL(id, "create"), map[string]any{"path": dir + "/a.txt"})
			h.fbMustFail(404, "Path not found: /missing", "POST", fbURL(id, "create"), map[string]any{"path": "/missing/x"})

			h.must(200, "PUT", fbURL(id, "content", "path", dir+"/a.txt"), map[string]any{"content": "hello\nworld\n"}, nil)
			if got := h.fbRead(id, dir+"/a.txt"); got != "hello\nworld\n" {
				t.Fatalf("content = %q", got)
			}

			// chmod a file, then a directory (not recursive), through the archive API.
			h.must(200, "POST", fbURL(id, "chmod"), map[string]any{"path": dir + "/a.txt", "mode": "0600"}, nil)
			h.must(200, "POST", fbURL(id, "chmod"), map[string]any{"path": dir, "mode": 750}, nil)
			ls := h.fbList(id, dir)
			if e := ls["a.txt"]; e.Type != "file" || e.Mode != "0600" || e.Permissions != "-rw-------" || e.Size != 12 {
				t.Fatalf("a.txt after chmod = %+v", e)
			}
			if e := h.fbList(id, "/tmp")["work"]; e.Type != "directory" || e.Mode != "0750" || e.Permissions != "drwxr-x---" {
				t.Fatalf("work after chmod = %+v", e)
			}
			h.fbMustFail(400, "Invalid mode", "POST", fbURL(id, "chmod"), map[string]any{"path": dir + "/a.txt", "mode": "999"})

			// A write keeps the mode and the owner of an existing file.
			fbPutTar(t, id, dir, &tar.Header{Name: "owned.txt", Typeflag: tar.TypeReg, Mode: 0o640, Uid: 1234, Gid: 1234, Size: 3})
			h.must(200, "PUT", fbURL(id, "content"), map[string]any{"path": dir + "/owned.txt", "content": "new"}, nil)
			if e := h.fbList(id, dir)["owned.txt"]; e.UID != 1234 || e.Mode != "0640" || e.Size != 3 {
				t.Fatalf("owned.txt after write = %+v", e)
			}
			if got := h.fbRead(id, dir+"/owned.txt"); got != "new" {
				t.Fatalf("owned.txt = %q", got)
			}

			// Upload two files; download the directory and compare.
			status, data := h.fbUpload(id, dir, map[string][]byte{"up1.txt": []byte("one"), "up2.bin": {0, 1, 2, 3}})
			if status != 200 {
				t.Fatalf("upload = %d %s", status, data)
			}
			got := h.fbDownload(id, dir)
			want := map[string]string{"work/": "", "work/a.txt": "hello\nworld\n", "work/owned.txt": "new",
				"work/up1.txt": "one", "work/up2.bin": "\x00\x01\x02\x03"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("download (-want +got):\n%s", diff)
			}
			if got := h.fbDownload(id, dir+"/up1.txt"); got["up1.txt"] != "one" || len(got) != 1 {
				t.Fatalf("download of a file = %v", got)
			}
			// The reference's format parameter: tar (the default) or tar.gz.
			if gz := h.fbDownloadAs(id, dir, "tar.gz"); cmp.Diff(want, gz) != "" {
				t.Fatalf("download as tar.gz (-want +got):\n%s", cmp.Diff(want, gz))
			}
			if got := h.fbDownloadAs(id, dir+"/up1.txt", "tar"); got["up1.txt"] != "one" {
				t.Fatalf("download as tar = %v", got)
			}
			h.fbMustFail(400, "format", "GET", fbURL(id, "download", "path", dir)+"&format=zip", nil)
			h.fbMustFail(400, "binary", "GET", fbURL(id, "content", "path", dir+"/up2.bin"), nil)

			// Rename and delete: rm and mv in a running container; in a
			// stopped one a copy and a removal recorded in its own layer.
			h.must(200, "POST", fbURL(id, "rename"), map[string]any{"path": dir + "/a.txt", "newPath": dir + "/b.txt"}, nil)
			h.fbMustFail(409, "already exists", "POST", fbURL(id, "rename"), map[string]any{"path": dir + "/b.txt", "newName": "up1.txt"})
			h.must(200, "DELETE", fbURL(id, "delete", "path", dir+"/up1.txt"), nil, nil)
			ls = h.fbList(id, dir)
			if _, ok := ls["b.txt"]; !ok || ls["a.txt"].Name != "" || ls["up1.txt"].Name != "" {
				t.Fatalf("after rename and delete: %v", ls)
			}
			if e := ls["b.txt"]; e.Mode != "0600" || e.Size != 12 {
				t.Fatalf("renamed file keeps its mode and size: %+v", e)
			}
			if got := h.fbRead(id, dir+"/b.txt"); got != "hello\nworld\n" {
				t.Fatalf("renamed content = %q", got)
			}
			// A directory with files, renamed and deleted; a file of the image.
			h.must(200, "POST", fbURL(id, "create"), map[string]any{"path": dir + "/sub", "type": "directory"}, nil)
			h.must(200, "PUT", fbURL(id, "content"), map[string]any{"path": dir + "/sub/c.txt", "content": "c"}, nil)
			h.must(200, "POST", fbURL(id, "rename"), map[string]any{"path": dir + "/sub", "newName": "sub2"}, nil)
			if got := h.fbRead(id, dir+"/sub2/c.txt"); got != "c" {
				t.Fatalf("file of a renamed directory = %q", got)
			}
			h.fbMustFail(404, "Path not found", "GET", fbURL(id, "", "path", dir+"/sub"), nil)
			h.must(200, "DELETE", fbURL(id, "delete", "path", "/bin/cat"), nil, nil)
			if _, ok := h.fbList(id, "/bin")["sh"]; !ok {
				t.Fatal("/bin/sh must remain after deleting /bin/cat")
			}
			h.fbMustFail(404, "Path not found", "DELETE", fbURL(id, "delete", "path", "/bin/cat"), nil)
			h.must(200, "DELETE", fbURL(id, "delete", "path", dir), nil, nil)
			h.fbMustFail(404, "Path not found", "GET", fbURL(id, "", "path", dir), nil)
			if got := h.inspectState(id).Running; got != running {
				t.Fatalf("running after the round trip = %v, want %v", got, running)
			}
		})
	}
}

func TestContainerFilesPausedContainerRefusesRemovals(t *testing.T) {
	h := newHarness(t)
	id := h.createContainer("berth-files-paused-"+h.label, true, "sleep", "3600")
	h.must(200, "POST", "/api/containers/"+id+"/pause?env=1", nil, nil)
	t.Cleanup(func() { h.do("POST", "/api/containers/"+id+"/unpause?env=1", nil) })
	h.fbMustFail(409, "unpause it first", "DELETE", fbURL(id, "delete", "path", "/bin/cat"), nil)
	h.fbMustFail(409, "unpause it first", "POST", fbURL(id, "rename"), map[string]any{"path": "/bin/cat", "newName": "dog"})
	h.must(200, "POST", "/api/containers/"+id+"/unpause?env=1", nil, nil)
	if _, ok := h.fbList(id, "/bin")["cat"]; !ok {
		t.Fatal("/bin/cat must remain after the refused removals")
	}
}

func TestContainerFilesStayInsideTheContainer(t *testing.T) {
	h := newHarness(t)
	// The engine refuses to extract a link climbing above the root: the
	// container makes that one itself.
	id := h.createContainer("berth-files-jail-"+h.label, true, "sh", "-c", "ln -s ../../.. /tmp/up && sleep 3600")
	deadline := time.Now().Add(30 * time.Second)
	for h.fbList(id, "/tmp")["up"].Type != "symlink" {
		if time.Now().After(deadline) {
			t.Fatal("the container did not make /tmp/up")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// ".." resolves against the container's root: this is the container's
	// own hostname file (its short id), not the host's.
	if got := strings.TrimSpace(h.fbRead(id, "../../../../../etc/hostname")); got != id[:12] {
		t.Fatalf("../../etc/hostname = %q, want the container's %q", got, id[:12])
	}
	if ls := h.fbList(id, "/../../.."); ls["etc"].Type != "directory" {
		t.Fatalf("listing of /../.. = %v", ls)
	}

	// Links: absolute, climbing above the root, and relative within the tree.
	fbPutTar(t, id, "/tmp",
		&tar.Header{Name: "escape", Typeflag: tar.TypeSymlink, Linkname: "/", Mode: 0o777},
		&tar.Header{Name: "sub", Typeflag: tar.TypeDir, Mode: 0o755},
		&tar.Header{Name: "rel", Typeflag: tar.TypeSymlink, Linkname: "sub", Mode: 0o777})
	ls := h.fbList(id, "/tmp")
	if e := ls["escape"]; e.Type != "symlink" || e.LinkTarget != "/" || e.Permissions != "lrwxrwxrwx" {
		t.Fatalf("escape = %+v", e)
	}
	for _, p := range []string{"/tmp/escape/etc/planted", "/tmp/up/planted"} {
		h.fbMustFail(400, "Refusing to write through the symbolic link", "PUT", fbURL(id, "content"), map[string]any{"path": p, "content": "x"})
		h.fbMustFail(400, "Refusing to write through the symbolic link", "POST", fbURL(id, "create"), map[string]any{"path": p})
		h.fbMustFail(400, "Refusing to write through the symbolic link", "POST", fbURL(id, "chmod"), map[string]any{"path": p, "mode": "777"})
		h.fbMustFail(400, "Refusing to write through the symbolic link", "DELETE", fbURL(id, "delete", "path", p), nil)
	}
	if status, data := h.fbUpload(id, "/tmp/escape/etc", map[string][]byte{"planted": []byte("x")}); status != 400 {
		t.Fatalf("upload through a link = %d %s", status, data)
	}
	if _, ok := h.fbList(id, "/etc")["planted"]; ok {
		t.Fatal("a refused write left /etc/planted")
	}
	// A relative link within the tree is written through.
	h.must(200, "PUT", fbURL(id, "content"), map[string]any{"path": "/tmp/rel/ok.txt", "content": "ok"}, nil)
	if got := h.fbRead(id, "/tmp/sub/ok.txt"); got != "ok" {
		t.Fatalf("/tmp/sub/ok.txt = %q", got)
	}
	// Reading a link gives the link, never what it points to.
	h.fbMustFail(400, "is a symbolic link", "GET", fbURL(id, "content", "path", "/tmp/escape"), nil)
	h.fbMustFail(400, "is a symbolic link", "GET", fbURL(id, "", "path", "/tmp/escape"), nil)
	h.fbMustFail(400, "is a symbolic link", "PUT", fbURL(id, "content"), map[string]any{"path": "/tmp/escape", "content": "x"})
	// The root itself cannot be changed, whatever the spelling.
	for _, p := range []string{"/", "/tmp/..", "../.."} {
		h.fbMustFail(400, "root directory", "DELETE", fbURL(id, "delete", "path", p), nil)
	}
	h.fbMustFail(400, "NUL", "GET", fbURL(id, "content", "path", "/etc/host\x00name"), nil)
	h.fbMustFail(409, "Path already exists: /tmp", "POST", fbURL(id, "rename"), map[string]any{"path": "/tmp/sub", "newPath": "/tmp/sub/.."})
	h.fbMustFail(400, "cannot be moved into itself", "POST", fbURL(id, "rename"), map[string]any{"path": "/tmp/sub", "newPath": "/tmp/sub/inner"})
}

func TestContainerFileSizeLimits(t *testing.T) {
	h := newHarness(t)
	id := h.createContainer("berth-files-limits-"+h.label, false, "sleep", "3600")
	const limit = 1 << 20
	fbPutTar(t, id, "/tmp", &tar.Header{Name: "big.txt", Typeflag: tar.TypeReg, Mode: 0o644, Size: limit + 1},
		&tar.Header{Name: "edge.txt", Typeflag: tar.TypeReg, Mode: 0o644, Size: limit})
	h.fbMustFail(413, "larger than the editor's limit of 1 MiB", "GET", fbURL(id, "content", "path", "/tmp/big.txt"), nil)
	if got := h.fbRead(id, "/tmp/edge.txt"); len(got) != limit {
		t.Fatalf("a file of exactly the limit reads %d bytes", len(got))
	}
	h.fbMustFail(413, "larger than the editor's limit", "PUT", fbURL(id, "content", "path", "/tmp/new.txt"),
		map[string]any{"content": strings.Repeat("y", limit+1)})
	if _, ok := h.fbList(id, "/tmp")["new.txt"]; ok {
		t.Fatal("a refused write created /tmp/new.txt")
	}

	// An upload announcing more than the limit is refused before its body is read.
	u, _ := url.Parse(h.url)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: %d\r\n\r\n",
		fbURL(id, "upload", "path", "/tmp"), u.Host, int64(512<<20)+1)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 413 || !strings.Contains(fbError(t, body), "Upload is larger than the limit of 512 MiB") {
		t.Fatalf("oversized upload = %d %s", resp.StatusCode, body)
	}
}

func TestContainerShells(t *testing.T) {
	h := newHarness(t)
	id := h.createContainer("berth-files-shells-"+h.label, false, "sleep", "3600")
	var sh struct {
		Shells       []string `json:"shells"`
		DefaultShell string   `json:"defaultShell"`
		AllShells    []struct {
			Path      string `json:"path"`
			Label     string `json:"label"`
			Available bool   `json:"available"`
		} `json:"allShells"`
	}
	h.must(200, "GET", "/api/containers/"+id+"/shells?env=1", nil, &sh)
	avail := map[string]bool{}
	for _, s := range sh.AllShells {
		avail[s.Path] = s.Available
	}
	if !avail["/bin/sh"] || avail["/bin/bash"] || avail["/usr/bin/fish"] || sh.DefaultShell != "/bin/sh" || len(sh.AllShells) < 5 {
		t.Fatalf("shells of busybox = %+v", sh)
	}
	h.fbMustFail(404, "Container not found", "GET", "/api/containers/berth-no-such-"+h.label+"/shells?env=1", nil)
}

func TestContainerUpdateResources(t *testing.T) {
	h := newHarness(t)
	id := h.createContainer("berth-update-"+h.label, true, "sleep", "3600")
	type hostConfig struct {
		Memory        int64  `json:"memory"`
		MemorySwap    int64  `json:"memorySwap"`
		CPUShares     int64  `json:"cpuShares"`
		NanoCPUs      int64  `json:"nanoCpus"`
		CpusetCpus    string `json:"cpusetCpus"`
		PidsLimit     int64  `json:"pidsLimit"`
		RestartPolicy struct {
			Name              string `json:"name"`
			MaximumRetryCount int    `json:"maximumRetryCount"`
		} `json:"restartPolicy"`
	}
	var res struct {
		Success    bool       `json:"success"`
		HostConfig hostConfig `json:"hostConfig"`
	}
	h.must(200, "POST", "/api/containers/"+id+"/update?env=1", map[string]any{
		"memory": 64 << 20, "memorySwap": 128 << 20, "cpuShares": 512, "cpus": 0.5, "cpusetCpus": "0",
		"pidsLimit": 100, "restartPolicy": "on-failure", "maximumRetryCount": 3,
	}, &res)
	hc := res.HostConfig
	if !res.Success || hc.Memory != 64<<20 || hc.MemorySwap != 128<<20 || hc.CPUShares != 512 || hc.NanoCPUs != 5e8 ||
		hc.CpusetCpus != "0" || hc.PidsLimit != 100 || hc.RestartPolicy.Name != "on-failure" || hc.RestartPolicy.MaximumRetryCount != 3 {
		t.Fatalf("update = %+v", res)
	}
	// The engine holds the same.
	var doc struct {
		HostConfig struct {
			Memory        int64
			NanoCpus      int64
			RestartPolicy struct{ Name string }
		}
	}
	enginetest.Must(t, 200, "GET", "/containers/"+id+"/json", nil, nil, &doc)
	if doc.HostConfig.Memory != 64<<20 || doc.HostConfig.NanoCpus != 5e8 || doc.HostConfig.RestartPolicy.Name != "on-failure" {
		t.Fatalf("engine HostConfig = %+v", doc.HostConfig)
	}

	h.must(200, "POST", "/api/containers/"+id+"/update-runtime?env=1", map[string]any{
		"restartPolicy": map[string]any{"name": "unless-stopped"}, "memory": 96 << 20, "memorySwap": -1,
	}, &res)
	if res.HostConfig.RestartPolicy.Name != "unless-stopped" || res.HostConfig.Memory != 96<<20 || res.HostConfig.MemorySwap != -1 ||
		res.HostConfig.CPUShares != 512 {
		t.Fatalf("update-runtime = %+v", res)
	}
	// The reference's update-runtime body is the engine's update document
	// (PascalCase), "unchanged" values included.
	h.must(200, "POST", "/api/containers/"+id+"/update-runtime?env=1", map[string]any{
		"Memory": 96 << 20, "MemorySwap": -1, "CpuShares": 256, "RestartPolicy": map[string]any{"Name": "always"},
		"BlkioWeight": 0, "CpusetMems": "", "MemorySwappiness": -1, "BlkioDeviceReadBps": []any{}, "KernelMemory": 0,
	}, &res)
	if res.HostConfig.RestartPolicy.Name != "always" || res.HostConfig.CPUShares != 256 {
		t.Fatalf("update-runtime in the engine's shape = %+v", res)
	}
	for _, body := range []map[string]any{{"BlkioWeight": 300}, {"CpusetMems": "0"},
		{"BlkioDeviceWriteBps": []map[string]any{{"Path": "/dev/sda", "Rate": 1}}}, {"MemorySwappiness": 10}} {
		h.fbMustFail(400, "cannot be changed by Berth", "POST", "/api/containers/"+id+"/update-runtime?env=1", body)
	}
	h.must(200, "POST", "/api/containers/"+id+"/update-runtime?env=1", map[string]any{
		"restartPolicy": map[string]any{"name": "unless-stopped"}, "memory": 96 << 20, "memorySwap": -1, "cpuShares": 512}, &res)

	for _, c := range []struct {
		body map[string]any
		msg  string
	}{
		{map[string]any{"memory": 1000}, "memory must be at least 6 MiB"},
		{map[string]any{"memory": -5}, "at least 6 MiB"},
		{map[string]any{"cpus": -1}, "cpus must be a non-negative number"},
		{map[string]any{"cpus": 1, "nanoCpus": 5}, "cpus and nanoCpus disagree"},
		{map[string]any{"cpusetCpus": "a-b"}, "Invalid cpusetCpus"},
		{map[string]any{"pidsLimit": -2}, "pidsLimit must be"},
		{map[string]any{"restartPolicy": "sometimes"}, "Invalid restart policy"},
		{map[string]any{"restartPolicy": "always", "maximumRetryCount": 2}, "only to the on-failure"},
		{map[string]any{"memorySwap": 10 << 20, "memory": 64 << 20}, "memorySwap must not be less than memory"},
		{map[string]any{"memory": "lots"}, "Invalid JSON body"},
	} {
		h.fbMustFail(400, c.msg, "POST", "/api/containers/"+id+"/update?env=1", c.body)
	}
	// Nothing of the refused updates was applied.
	enginetest.Must(t, 200, "GET", "/containers/"+id+"/json", nil, nil, &doc)
	if doc.HostConfig.Memory != 96<<20 || doc.HostConfig.RestartPolicy.Name != "unless-stopped" {
		t.Fatalf("after refused updates: %+v", doc.HostConfig)
	}
	h.fbMustFail(404, "Container not found", "POST", "/api/containers/berth-no-such-"+h.label+"/update?env=1", map[string]any{"memory": 64 << 20})
}
