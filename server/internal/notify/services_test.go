package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/notify"
)

// request is what a service's receiver saw.
type request struct {
	Path, Query, ContentType, Title, Auth, Body string
}

func TestEachServiceGetsItsOwnRequest(t *testing.T) {
	got := make(chan request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- request{Path: r.URL.Path, Query: r.URL.RawQuery, ContentType: r.Header.Get("Content-Type"),
			Title: r.Header.Get("Title"), Auth: r.Header.Get("Authorization"), Body: string(b)}
	}))
	t.Cleanup(srv.Close)
	ev := notify.Event{Type: "container_exited", EnvironmentID: 2, Environment: "prod", Title: "Container web exited with code 1",
		Message: "Container web exited with code 1.", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	for _, tc := range []struct {
		typ, cfg string
		want     request
	}{
		{"webhook", `{"url":"` + srv.URL + `/hook","headers":{"Authorization":"Bearer h"}}`, request{Path: "/hook",
			ContentType: "application/json", Auth: "Bearer h",
			Body: `{"environment":"prod","environmentId":2,"event":"container_exited","message":"Container web exited with code 1.","timestamp":"2026-01-02T03:04:05Z","title":"Container web exited with code 1"}`}},
		{"slack", `{"url":"` + srv.URL + `/services/T/B/X"}`, request{Path: "/services/T/B/X", ContentType: "application/json",
			Body: `{"text":"*Container web exited with code 1*\nContainer web exited with code 1.\nEnvironment: prod"}`}},
		{"discord", `{"url":"` + srv.URL + `/api/webhooks/1/x"}`, request{Path: "/api/webhooks/1/x", ContentType: "application/json",
			Body: `{"content":"**Container web exited with code 1**\nContainer web exited with code 1.\nEnvironment: prod"}`}},
		{"gotify", `{"url":"` + srv.URL + `/","token":"app-t"}`, request{Path: "/message", Query: "token=app-t", ContentType: "application/json",
			Body: `{"message":"Container web exited with code 1.\nEnvironment: prod","priority":5,"title":"Container web exited with code 1"}`}},
		{"ntfy", `{"url":"` + srv.URL + `/berth-alerts","token":"tk"}`, request{Path: "/berth-alerts", ContentType: "text/plain; charset=utf-8",
			Title: "Container web exited with code 1", Auth: "Bearer tk", Body: "Container web exited with code 1.\nEnvironment: prod"}},
		{"telegram", `{"botToken":"123:abc","chatId":"-42","apiUrl":"` + srv.URL + `"}`, request{Path: "/bot123:abc/sendMessage",
			ContentType: "application/json", Body: `{"chat_id":"-42","text":"Container web exited with code 1\nContainer web exited with code 1.\nEnvironment: prod"}`}},
	} {
		cfg, err := notify.ParseConfig(tc.typ, json.RawMessage(tc.cfg))
		if err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		if err := notify.Send(context.Background(), tc.typ, cfg, notify.Message{Event: ev}); err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		r := <-got
		r.Body = strings.TrimSpace(r.Body)
		if r != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.typ, r, tc.want)
		}
	}
}

func TestDeliveryErrorsDoNotCarryTheURL(t *testing.T) {
	cfg, err := notify.ParseConfig("telegram", json.RawMessage(`{"botToken":"999:s3cr3t","chatId":"1","apiUrl":"http://127.0.0.1:1"}`))
	if err != nil {
		t.Fatal(err)
	}
	err = notify.Send(context.Background(), "telegram", cfg, notify.Message{Event: notify.Event{Type: "container_oom"}})
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("error %v: want a failure that does not show the bot token", err)
	}
}

func FuzzParseConfigMasksEverySecret(f *testing.F) {
	f.Add("smtp", `{"host":"h","port":25,"password":"pw","from_email":"a@b.c","to_emails":["x@y.z"]}`)
	f.Add("webhook", `{"url":"https://x.example/t0k","headers":{"X-Key":"k"}}`)
	f.Add("telegram", `{"botToken":"1:a","chatId":"2"}`)
	f.Fuzz(func(t *testing.T, typ, raw string) {
		cfg, err := notify.ParseConfig(typ, json.RawMessage(raw))
		if err != nil {
			return
		}
		var shown notify.Config
		if err := json.Unmarshal(cfg.Masked(), &shown); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]string{"password": shown.Password, "url": shown.URL, "token": shown.Token,
			"botToken": shown.BotToken, "user": shown.User} {
			if v != "" && v != notify.Mask {
				t.Errorf("masked %s = %q", name, v)
			}
		}
		for k, v := range shown.Headers {
			if v != notify.Mask {
				t.Errorf("masked header %s = %q", k, v)
			}
		}
	})
}
