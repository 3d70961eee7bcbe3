package enginetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// WatchCreates watches the engine at socket for the containers created
// with every one of labels ("key=value") from now on. The function it
// returns tells, for each one created so far, the image it was created
// from as the creator named it (an id or a name): it creates one last
// container with the labels (from Image(), on that engine) and reads the
// engine's events up to that one's, so that none created before is missed.
func WatchCreates(t testing.TB, socket string, labels ...string) func() map[string]string {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}}
	f, _ := json.Marshal(map[string][]string{"type": {"container"}, "event": {"create"}, "label": labels})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://engine/events?filters="+url.QueryEscape(string(f)), nil)
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("engine events: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
	})
	dec := json.NewDecoder(resp.Body)
	return func() map[string]string {
		t.Helper()
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		marker := hex.EncodeToString(b)
		ls := map[string]string{Label: marker}
		for _, l := range labels {
			k, v, _ := strings.Cut(l, "=")
			ls[k] = v
		}
		body, _ := json.Marshal(map[string]any{"Image": Image(), "Cmd": []string{"true"}, "Labels": ls})
		creq, _ := http.NewRequest("POST", "http://engine/containers/create", bytes.NewReader(body))
		creq.Header.Set("Content-Type", "application/json")
		cresp, err := hc.Do(creq)
		if err != nil {
			t.Fatalf("creating the last container: %v", err)
		}
		var ct struct{ ID string }
		err = json.NewDecoder(cresp.Body).Decode(&ct)
		cresp.Body.Close()
		if err != nil || ct.ID == "" {
			t.Fatalf("creating the last container: %d %v", cresp.StatusCode, err)
		}
		defer func() {
			dreq, _ := http.NewRequest("DELETE", "http://engine/containers/"+ct.ID+"?force=1", nil)
			if r, err := hc.Do(dreq); err == nil {
				r.Body.Close()
			}
		}()
		images := map[string]string{}
		for {
			var ev struct {
				Actor struct {
					ID         string
					Attributes map[string]string
				}
			}
			if err := dec.Decode(&ev); err != nil {
				t.Fatalf("engine events: %v", err)
			}
			if ev.Actor.ID == ct.ID {
				return images
			}
			images[ev.Actor.ID] = ev.Actor.Attributes["image"]
		}
	}
}
