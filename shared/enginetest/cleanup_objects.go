package enginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// RemoveLabelledVolumes removes every volume carrying Label=value. Remove
// the containers using them first (RemoveLabelled): a volume in use stays,
// and the failure is reported.
func RemoveLabelledVolumes(t testing.TB, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hc := HTTPClient()
	defer hc.CloseIdleConnections()
	var list struct{ Volumes []struct{ Name string } }
	if err := getLabelled(ctx, hc, "/volumes", value, &list); err != nil {
		t.Errorf("cleanup: list volumes: %v", err)
		return
	}
	for _, v := range list.Volumes {
		if err := engineDelete(ctx, hc, "/volumes/"+url.PathEscape(v.Name)+"?force=1"); err != nil {
			t.Errorf("cleanup: remove volume %s: %v", v.Name, err)
		}
	}
}

// RemoveLabelledNetworks removes every network carrying Label=value, first
// disconnecting (by force) any container still attached.
func RemoveLabelledNetworks(t testing.TB, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hc := HTTPClient()
	defer hc.CloseIdleConnections()
	var list []struct{ ID string }
	if err := getLabelled(ctx, hc, "/networks", value, &list); err != nil {
		t.Errorf("cleanup: list networks: %v", err)
		return
	}
	for _, n := range list {
		var doc struct{ Containers map[string]json.RawMessage }
		if err := engineGet(ctx, hc, "/networks/"+n.ID, &doc); err != nil {
			t.Errorf("cleanup: inspect network %s: %v", n.ID, err)
			continue
		}
		for cid := range doc.Containers {
			body := fmt.Sprintf(`{"Container":%q,"Force":true}`, cid)
			if err := engineDo(ctx, hc, http.MethodPost, "/networks/"+n.ID+"/disconnect", body, nil); err != nil {
				t.Errorf("cleanup: disconnect %s from network %s: %v", cid, n.ID, err)
			}
		}
		if err := engineDelete(ctx, hc, "/networks/"+n.ID); err != nil {
			t.Errorf("cleanup: remove network %s: %v", n.ID, err)
		}
	}
}

// getLabelled lists the objects at path carrying Label=value into out.
func getLabelled(ctx context.Context, hc *http.Client, path, value string, out any) error {
	filters, _ := json.Marshal(map[string][]string{"label": {Label + "=" + value}})
	return engineGet(ctx, hc, path+"?filters="+url.QueryEscape(string(filters)), out)
}

func engineGet(ctx context.Context, hc *http.Client, path string, out any) error {
	return engineDo(ctx, hc, http.MethodGet, path, "", out)
}

// engineDelete deletes the object at path; one already gone is no failure.
func engineDelete(ctx context.Context, hc *http.Client, path string) error {
	err := engineDo(ctx, hc, http.MethodDelete, path, "", nil)
	if err != nil && strings.HasPrefix(err.Error(), "404 ") {
		return nil
	}
	return err
}

// engineDo sends one raw Engine API request and decodes a JSON answer into
// out (when out is not nil). A status of 400 or more is an error.
func engineDo(ctx context.Context, hc *http.Client, method, path, body string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, "http://engine"+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		var msg struct{ Message string }
		_ = json.NewDecoder(resp.Body).Decode(&msg)
		return fmt.Errorf("%d %s", resp.StatusCode, msg.Message)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
