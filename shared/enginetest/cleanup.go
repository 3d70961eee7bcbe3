package enginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// RemoveLabelled force-removes every container carrying Label=value.
func RemoveLabelled(t testing.TB, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	filters, _ := json.Marshal(map[string][]string{"label": {Label + "=" + value}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet,
		"http://engine/containers/json?all=1&filters="+url.QueryEscape(string(filters)), nil)
	resp, err := HTTPClient().Do(req)
	if err != nil {
		t.Errorf("cleanup: list containers: %v", err)
		return
	}
	defer resp.Body.Close()
	var list []struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Errorf("cleanup: decode: %v", err)
		return
	}
	for _, c := range list {
		req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, fmt.Sprintf("http://engine/containers/%s?force=1&v=1", c.ID), nil)
		if resp, err := HTTPClient().Do(req); err != nil {
			t.Errorf("cleanup: remove %s: %v", c.ID, err)
		} else {
			resp.Body.Close()
		}
	}
}
