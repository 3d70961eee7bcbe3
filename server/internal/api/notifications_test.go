package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// hookReceiver is a real HTTP server taking webhook notifications.
type hookReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []map[string]any
}

func newHookReceiver(t *testing.T, handle func(w http.ResponseWriter, r *http.Request)) *hookReceiver {
	t.Helper()
	rcv := &hookReceiver{}
	rcv.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if handle != nil {
			handle(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		rcv.mu.Lock()
		rcv.got = append(rcv.got, m)
		rcv.mu.Unlock()
	}))
	t.Cleanup(rcv.Close)
	return rcv
}

func (r *hookReceiver) received() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.got...)
}

type notificationOut struct {
	ID         int64          `json:"id"`
	Type       string         `json:"type"`
	Name       string         `json:"name"`
	Enabled    bool           `json:"enabled"`
	Config     map[string]any `json:"config"`
	EventTypes []string       `json:"eventTypes"`
	LastError  string         `json:"lastError"`
	CreatedAt  time.Time      `json:"createdAt"`
	UpdatedAt  time.Time      `json:"updatedAt"`
}

func TestNotificationChannelSecretsAreMaskedAndKept(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	var created notificationOut
	h.must(http.StatusCreated, "POST", "/api/notifications", map[string]any{"type": "smtp", "name": "Ops mail",
		"config": map[string]any{"host": "mail.example", "port": 587, "username": "berth", "password": "sm7p-s3cret",
			"from_email": "berth@example.com", "to_emails": []string{"ops@example.com"}},
		"eventTypes": []string{"container_exited"}}, &created)
	if created.Config["password"] != "********" || created.Config["host"] != "mail.example" || !created.Enabled ||
		created.Type != "smtp" || created.Name != "Ops mail" {
		t.Errorf("created = %+v, want the password masked", created)
	}
	var list []notificationOut
	h.must(http.StatusOK, "GET", "/api/notifications", nil, &list)
	if len(list) != 1 || list[0].Config["password"] != "********" {
		t.Errorf("list = %+v", list)
	}
	_, body := h.do("GET", "/api/notifications", nil)
	if strings.Contains(string(body), "sm7p-s3cret") {
		t.Errorf("the list shows the password: %s", body)
	}

	// The mask sent back keeps the password (for the same server: see
	// TestNotificationSecretsStayWithTheirHost); other fields change.
	var updated notificationOut
	h.must(http.StatusOK, "PUT", "/api/notifications/"+strconv.FormatInt(created.ID, 10), map[string]any{
		"name": "Ops mail 2", "config": map[string]any{"host": "mail.example", "port": 587, "secure": true, "username": "berth",
			"password": "********", "from_email": "berth@example.com", "to_emails": []string{"ops@example.com"}}}, &updated)
	stored, err := h.store.GetNotificationChannel(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	_ = json.Unmarshal(stored.Config, &cfg)
	if cfg["password"] != "sm7p-s3cret" || cfg["secure"] != true || stored.Name != "Ops mail 2" ||
		len(stored.EventTypes) != 1 {
		t.Errorf("stored after update = %+v %v", stored, cfg)
	}
	if strings.Contains(h.logs.String(), "sm7p-s3cret") {
		t.Error("the log shows the password")
	}

	h.must(http.StatusOK, "DELETE", "/api/notifications/"+strconv.FormatInt(created.ID, 10), nil, nil)
	status, body := h.do("GET", "/api/notifications/"+strconv.FormatInt(created.ID, 10), nil)
	if status != http.StatusNotFound || !strings.Contains(string(body), "Notification not found") {
		t.Errorf("GET after delete = %d %s", status, body)
	}
}

func TestBadNotificationChannelsAreRefusedAndChangeNothing(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		body any
		want string
	}{
		{map[string]any{"type": "webhook", "config": map[string]any{"url": "https://x.example"}}, "Name is required"},
		{map[string]any{"name": "x", "type": "fax", "config": map[string]any{}}, `Unknown notification type \"fax\"`},
		{map[string]any{"name": "x", "type": "webhook", "config": map[string]any{"url": "not a url"}}, "A valid http(s) url is required"},
		{map[string]any{"name": "x", "type": "webhook", "config": map[string]any{"url": "https://x.example"},
			"eventTypes": []string{"container_exploded"}}, `Unknown event type \"container_exploded\"`},
		{`{"name": 5}`, "Invalid JSON body"},
	} {
		status, body := h.do("POST", "/api/notifications", tc.body)
		if status != http.StatusBadRequest || !strings.Contains(string(body), tc.want) {
			t.Errorf("POST %v = %d %s, want 400 %q", tc.body, status, body, tc.want)
		}
	}
	var list []notificationOut
	h.must(http.StatusOK, "GET", "/api/notifications", nil, &list)
	if len(list) != 0 {
		t.Errorf("channels after refused creates: %+v", list)
	}
	ok := map[string]any{"name": "hook", "type": "webhook", "config": map[string]any{"url": "https://x.example"}}
	h.must(http.StatusCreated, "POST", "/api/notifications", ok, nil)
	if status, body := h.do("POST", "/api/notifications", ok); status != http.StatusConflict {
		t.Errorf("duplicate name = %d %s, want 409", status, body)
	}
}

func TestNotificationTestSendsThroughTheChannel(t *testing.T) {
	h := newHarness(t)
	rcv := newHookReceiver(t, nil)
	var ch notificationOut
	h.must(http.StatusCreated, "POST", "/api/notifications", map[string]any{"name": "hook", "type": "webhook",
		"config": map[string]any{"url": rcv.URL + "/hook?token=abc"}}, &ch)
	if ch.Config["url"] != "********" {
		t.Errorf("webhook url shown as %v, want masked", ch.Config["url"])
	}
	var out struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
	}
	h.must(http.StatusOK, "POST", "/api/notifications/"+strconv.FormatInt(ch.ID, 10)+"/test", nil, &out)
	if !out.Success {
		t.Fatalf("test = %+v", out)
	}
	if got := rcv.received(); len(got) != 1 || got[0]["title"] != "Berth test notification" {
		t.Errorf("receiver got %v", got)
	}

	// Unsaved settings; a masked URL with the id of a saved channel uses its URL.
	h.must(http.StatusOK, "POST", "/api/notifications/test", map[string]any{"id": ch.ID, "type": "webhook",
		"config": map[string]any{"url": "********"}}, &out)
	if !out.Success || len(rcv.received()) != 2 {
		t.Errorf("test with the saved url = %+v, received %d", out, len(rcv.received()))
	}
	down := newHookReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	h.must(http.StatusOK, "POST", "/api/notifications/test", map[string]any{"name": "x", "type": "webhook",
		"config": map[string]any{"url": down.URL + "/?token=s3cr3t"}}, &out)
	if out.Success || out.Error != "the service answered 502 Bad Gateway" {
		t.Errorf("test of a failing receiver = %+v", out)
	}
	if status, _ := h.do("POST", "/api/notifications/test", map[string]any{"name": "x", "type": "webhook",
		"config": map[string]any{}}); status != http.StatusBadRequest {
		t.Errorf("test without url = %d, want 400", status)
	}
}

type subscriptionOut struct {
	ID             int64    `json:"id"`
	EnvironmentID  int64    `json:"environmentId"`
	NotificationID int64    `json:"notificationId"`
	Enabled        bool     `json:"enabled"`
	EventTypes     []string `json:"eventTypes"`
	ChannelName    string   `json:"channelName"`
	ChannelType    string   `json:"channelType"`
}

func TestEnvironmentSubscriptionsRouteEventsToTheirChannels(t *testing.T) {
	h := newHarness(t)
	rcv := newHookReceiver(t, nil)
	var ch notificationOut
	h.must(http.StatusCreated, "POST", "/api/notifications", map[string]any{"name": "hook", "type": "webhook",
		"config": map[string]any{"url": rcv.URL}}, &ch)
	id := strconv.FormatInt(ch.ID, 10)

	if status, body := h.do("POST", "/api/environments/1/notifications", map[string]any{"notificationId": ch.ID + 99}); status != http.StatusNotFound {
		t.Errorf("subscribe to a missing channel = %d %s, want 404", status, body)
	}
	var sub subscriptionOut
	h.must(http.StatusCreated, "POST", "/api/environments/1/notifications", map[string]any{"notificationId": ch.ID,
		"eventTypes": []string{"container_oom"}}, &sub)
	if sub.EnvironmentID != 1 || sub.NotificationID != ch.ID || !sub.Enabled || sub.ChannelName != "hook" || sub.ChannelType != "webhook" {
		t.Errorf("subscription = %+v", sub)
	}
	if status, _ := h.do("POST", "/api/environments/1/notifications", map[string]any{"notificationId": ch.ID}); status != http.StatusConflict {
		t.Errorf("second subscription = %d, want 409", status)
	}
	// An event the subscription does not take goes nowhere; then one it takes.
	h.must(http.StatusOK, "POST", "/api/notifications/trigger-test", map[string]any{"environmentId": 1, "eventType": "container_stopped"}, nil)
	h.must(http.StatusOK, "PUT", "/api/environments/1/notifications/"+id, map[string]any{"eventTypes": []string{"container_started"}}, &sub)
	h.must(http.StatusOK, "POST", "/api/notifications/trigger-test", map[string]any{"environmentId": 1, "eventType": "container_started"}, nil)
	deadline := time.Now().Add(time.Minute)
	for len(rcv.received()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	got := rcv.received()
	if len(got) != 1 || got[0]["event"] != "container_started" || got[0]["environmentId"] != float64(1) {
		t.Errorf("receiver got %v, want the one container_started event", got)
	}
	var list []subscriptionOut
	h.must(http.StatusOK, "GET", "/api/environments/1/notifications", nil, &list)
	if len(list) != 1 || len(list[0].EventTypes) != 1 || list[0].EventTypes[0] != "container_started" {
		t.Errorf("subscriptions = %+v", list)
	}
	h.must(http.StatusOK, "DELETE", "/api/environments/1/notifications/"+id, nil, nil)
	if status, _ := h.do("GET", "/api/environments/1/notifications/"+id, nil); status != http.StatusNotFound {
		t.Errorf("GET of a deleted subscription = %d, want 404", status)
	}
}

func TestChannelThatHangsDoesNotDelayTheOperation(t *testing.T) {
	h := newHarness(t)
	release := make(chan struct{})
	hung := make(chan struct{}, 1)
	rcv := newHookReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case hung <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) })
	var ch notificationOut
	h.must(http.StatusCreated, "POST", "/api/notifications", map[string]any{"name": "slow", "type": "webhook",
		"config": map[string]any{"url": rcv.URL}}, &ch)
	h.must(http.StatusCreated, "POST", "/api/environments/1/notifications", map[string]any{"notificationId": ch.ID}, nil)
	// The operation answers while the channel has not answered.
	h.must(http.StatusOK, "POST", "/api/notifications/trigger-test", map[string]any{"environmentId": 1}, nil)
	<-hung
	h.must(http.StatusOK, "GET", "/api/notifications", nil, nil)
}
