package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/servertest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// maxExportGrowth bounds how much the server's resident set may grow while
// it streams a volume or image export: the stream is copied through, never
// held.
const maxExportGrowth = 50 << 20

// rssSampler is a sink that reads the server's VmRSS every sampleEvery
// bytes and keeps the highest value.
type rssSampler struct {
	t       *testing.T
	pid     int
	n, next int64
	peak    int64
}

const sampleEvery = 32 << 20

func (s *rssSampler) Write(p []byte) (int, error) {
	s.n += int64(len(p))
	if s.n >= s.next {
		s.next = s.n + sampleEvery
		if rss := procStatus(s.t, s.pid)["VmRSS"]; rss > s.peak {
			s.peak = rss
		}
	}
	return len(p), nil
}

// TestExportsStreamInConstantMemory runs the real server on the local
// engine, exports a 1 GiB volume and a large image through the API, and
// samples the process's VmRSS while the body is read: it grows by less
// than 50 MB.
func TestExportsStreamInConstantMemory(t *testing.T) {
	enginetest.Require(t)
	label := fmt.Sprintf("rss-%d", os.Getpid())
	vol := "berth-rss-" + label
	img := "berth-test/rss-" + label + ":1"
	t.Cleanup(func() {
		enginetest.RemoveLabelled(t, label)
		removeVolumeHelpers(t, vol)
		enginetest.RemoveLabelledVolumes(t, label)
		enginetest.Do(t, "DELETE", "/images/"+url.PathEscape(img)+"?force=1", nil, nil)
	})

	// A volume of 1 GiB, and an image with a 128 MiB layer (committed from
	// a labelled container, which is then removed). The files are sparse,
	// quick to make: what they stream is as long as their size.
	enginetest.Must(t, 201, "POST", "/volumes/create", nil,
		map[string]any{"Name": vol, "Labels": map[string]string{enginetest.Label: label}}, nil)
	runLabelled(t, label, []string{vol + ":/d"}, "dd if=/dev/zero of=/d/big bs=1048576 count=0 seek=1024 2>/dev/null", "")
	runLabelled(t, label, nil, "dd if=/dev/zero of=/big bs=1048576 count=0 seek=128 2>/dev/null", img)

	bin := servertest.Build(t)
	dataDir := t.TempDir()
	base, pid, _ := startServer(t, bin, "server", "DATA_DIR="+dataDir, "DOCKER_SOCKET="+enginetest.Socket, "LOG_LEVEL=warn", "GOMAXPROCS=2")
	cookie := servertest.FirstAdmin(t, base, dataDir, "admin", "admin-password")

	for _, c := range []struct {
		what, path string
		min        int64
	}{
		{"volume export", "/api/volumes/" + vol + "/export?env=1", 1 << 30},
		{"image export", "/api/images/" + url.PathEscape(img) + "/export?env=1", 128 << 20},
	} {
		req, err := http.NewRequest("GET", base+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Cookie", cookie)
		before := procStatus(t, pid)["VmRSS"]
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Fatalf("%s = %d %s", c.what, resp.StatusCode, b)
		}
		s := &rssSampler{t: t, pid: pid, peak: before}
		_, err = io.Copy(s, resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: reading the body: %v", c.what, err)
		}
		growth := s.peak - before
		t.Logf("%s: %d MiB streamed; VmRSS %d MiB before, peak %d MiB (growth %d MiB)",
			c.what, s.n>>20, before>>20, s.peak>>20, growth>>20)
		if s.n < c.min {
			t.Errorf("%s streamed %d bytes, want at least %d", c.what, s.n, c.min)
		}
		if growth >= maxExportGrowth {
			t.Errorf("%s: VmRSS grew by %d MiB, want less than %d MiB", c.what, growth>>20, maxExportGrowth>>20)
		}
	}
}

// runLabelled runs script (sh) to its end in a labelled container with
// binds; with commitAs, the container is committed as that image (labelled
// too) before it is removed.
func runLabelled(t *testing.T, label string, binds []string, script, commitAs string) {
	t.Helper()
	var ct struct{ Id string }
	enginetest.Must(t, 201, "POST", "/containers/create", nil, map[string]any{
		"Image": enginetest.Image(), "Cmd": []string{"sh", "-c", script},
		"Labels": map[string]string{enginetest.Label: label}, "HostConfig": map[string]any{"Binds": binds},
	}, &ct)
	defer enginetest.Do(t, "DELETE", "/containers/"+ct.Id+"?force=1", nil, nil)
	enginetest.Must(t, 204, "POST", "/containers/"+ct.Id+"/start", nil, nil, nil)
	var w struct{ StatusCode int }
	enginetest.Must(t, 200, "POST", "/containers/"+ct.Id+"/wait", nil, nil, &w)
	if w.StatusCode != 0 {
		t.Fatalf("%q: exit %d", script, w.StatusCode)
	}
	if commitAs != "" {
		repo, tag, _ := strings.Cut(commitAs, ":")
		enginetest.Must(t, 201, "POST", "/commit?container="+ct.Id+"&repo="+url.QueryEscape(repo)+"&tag="+tag, nil,
			map[string]any{"Labels": map[string]string{enginetest.Label: label}}, nil)
	}
}

// removeVolumeHelpers removes Berth's helper containers on volume, if any
// were left.
func removeVolumeHelpers(t *testing.T, volume string) {
	t.Helper()
	f := url.QueryEscape(`{"label":["berth.helper.volume=` + volume + `"]}`)
	var list []struct{ Id string }
	enginetest.Must(t, 200, "GET", "/containers/json?all=1&filters="+f, nil, nil, &list)
	for _, c := range list {
		enginetest.Do(t, "DELETE", "/containers/"+c.Id+"?force=1", nil, nil)
	}
}
