package notify_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/environments"
	"github.com/berth-dev/berth/server/internal/events"
	"github.com/berth-dev/berth/server/internal/notify"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
	"github.com/berth-dev/berth/shared/fault"
	"github.com/berth-dev/berth/shared/testwait"
)

func unique(t *testing.T) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// smtpServer returns the address and Maildir of the test SMTP server
// (scripts/lib/smtp.sh).
func smtpServer(t *testing.T) (host string, port int, dir string) {
	t.Helper()
	enginetest.RequireEnv(t, "the SMTP server", "BERTH_TEST_SMTP_ADDR", "BERTH_TEST_SMTP_DIR")
	h, p, _ := strings.Cut(os.Getenv("BERTH_TEST_SMTP_ADDR"), ":")
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return h, n, os.Getenv("BERTH_TEST_SMTP_DIR")
}

// mails returns the messages of the Maildir sent to rcpt (each test has
// its own recipient), removing them when the test ends.
func mails(t *testing.T, dir, rcpt string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "new"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(dir, "new", e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if strings.Contains(string(b), "X-RcptTo: "+rcpt) {
			out = append(out, string(b))
			t.Cleanup(func() { os.Remove(p) })
		}
	}
	return out
}

// eventually polls cond until it holds, failing the test after a minute.
var eventually = testwait.Until

func TestSendMailReachesTheSMTPServer(t *testing.T) {
	host, port, dir := smtpServer(t)
	rcpt := "ops-" + unique(t) + "@berth.test"
	cfg, err := notify.ParseConfig("smtp", json.RawMessage(`{"host":"`+host+`","port":`+strconv.Itoa(port)+
		`,"from_email":"berth@berth.test","from_name":"Berth","to_emails":["`+rcpt+`"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := notify.Test(context.Background(), "smtp", cfg, "mail"); err != nil {
		t.Fatal(err)
	}
	got := mails(t, dir, rcpt)
	if len(got) != 1 {
		t.Fatalf("got %d messages for %s, want 1", len(got), rcpt)
	}
	for _, want := range []string{"Subject: Berth test notification", `This is a test of the notification channel "mail".`,
		"From: \"Berth\" <berth@berth.test>"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("message lacks %q:\n%s", want, got[0])
		}
	}
}

func TestParseConfigRejectsIncompleteSettings(t *testing.T) {
	for _, tc := range []struct{ typ, cfg, want string }{
		{"smtp", `{"port":25,"from_email":"a@b.c","to_emails":["x@y.z"]}`, "SMTP host is required"},
		{"smtp", `{"host":"h","port":0,"from_email":"a@b.c","to_emails":["x@y.z"]}`, "SMTP port must be between 1 and 65535"},
		{"smtp", `{"host":"h","port":25,"from_email":"nope","to_emails":["x@y.z"]}`, "A valid from_email is required"},
		{"smtp", `{"host":"h","port":25,"from_email":"a@b.c","to_emails":[]}`, "At least one recipient (to_emails) is required"},
		{"smtp", `{"host":"h","port":"25"}`, "Invalid config"},
		{"webhook", `{"url":"ftp://x"}`, "A valid http(s) url is required"},
		{"gotify", `{"url":"https://gotify.example"}`, "Gotify application token is required"},
		{"telegram", `{"botToken":"1:a"}`, "Telegram botToken and chatId are required"},
		{"carrier-pigeon", `{}`, `Unknown notification type "carrier-pigeon"`},
	} {
		_, err := notify.ParseConfig(tc.typ, json.RawMessage(tc.cfg))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: got %v, want %q", tc.typ, tc.cfg, err, tc.want)
		}
	}
}

func TestMaskedHidesSecretsAndKeepSecretsRestoresThem(t *testing.T) {
	stored := notify.Config{Host: "mail", Password: "p4ss", URL: "https://hooks.example/T0k3n", Token: "t",
		BotToken: "1:abc", Headers: map[string]string{"Authorization": "Bearer x"}}
	var shown map[string]any
	if err := json.Unmarshal(stored.Masked(), &shown); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"host": "mail", "password": notify.Mask, "url": notify.Mask, "token": notify.Mask,
		"botToken": notify.Mask, "headers": map[string]any{"Authorization": notify.Mask}}
	if diff := cmp.Diff(want, shown); diff != "" {
		t.Errorf("masked (-want +got):\n%s", diff)
	}
	back := notify.Config{Host: "mail2", Password: notify.Mask, URL: notify.Mask, Token: "new", BotToken: notify.Mask,
		Headers: map[string]string{"Authorization": notify.Mask}}
	if err := back.KeepSecrets(stored, "webhook"); err != nil {
		t.Fatalf("KeepSecrets to the same URL: %v", err)
	}
	wantBack := notify.Config{Host: "mail2", Password: "p4ss", URL: "https://hooks.example/T0k3n", Token: "new",
		BotToken: "1:abc", Headers: map[string]string{"Authorization": "Bearer x"}}
	if diff := cmp.Diff(wantBack, back); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
}

// A stored secret is sent only where it was saved for: settings that keep
// it masked while naming another destination are refused.
func TestKeepSecretsRefusesAnotherDestination(t *testing.T) {
	cases := []struct {
		typ          string
		stored, sent notify.Config
		refused      bool
	}{
		{"webhook", notify.Config{URL: "https://hooks.example/x", Headers: map[string]string{"Authorization": "Bearer x"}},
			notify.Config{URL: "http://169.254.169.254/x", Headers: map[string]string{"Authorization": notify.Mask}}, true},
		{"webhook", notify.Config{URL: "https://hooks.example/x", Headers: map[string]string{"Authorization": "Bearer x"}},
			notify.Config{URL: "https://hooks.example:8443/x", Headers: map[string]string{"Authorization": notify.Mask}}, true},
		{"webhook", notify.Config{URL: "https://hooks.example/x", Headers: map[string]string{"Authorization": "Bearer x"}},
			notify.Config{URL: "https://hooks.example/other", Headers: map[string]string{"Authorization": notify.Mask}}, false},
		{"webhook", notify.Config{URL: "https://hooks.example/x", Headers: map[string]string{"Authorization": "Bearer x"}},
			notify.Config{URL: "https://elsewhere.example/x", Headers: map[string]string{"Authorization": "Bearer new"}}, false},
		{"smtp", notify.Config{Host: "mail.example", Port: 587, Password: "p4ss"},
			notify.Config{Host: "evil.example", Port: 587, Password: notify.Mask}, true},
		{"smtp", notify.Config{Host: "mail.example", Port: 587, Password: "p4ss"},
			notify.Config{Host: "mail.example", Port: 25, Password: notify.Mask}, true},
		{"telegram", notify.Config{BotToken: "1:abc"}, notify.Config{APIURL: "http://10.0.0.1", BotToken: notify.Mask}, true},
		{"gotify", notify.Config{URL: "https://push.example", Token: "t"}, notify.Config{URL: "https://push.example", Token: notify.Mask}, false},
	}
	for i, c := range cases {
		err := c.sent.KeepSecrets(c.stored, c.typ)
		f, ok := fault.As(err)
		if c.refused && (!ok || f.Kind != fault.Forbidden || !strings.Contains(f.Message, "saved for")) {
			t.Errorf("case %d (%s): %v, want a 403", i, c.typ, err)
		}
		if !c.refused && err != nil {
			t.Errorf("case %d (%s): %v, want kept", i, c.typ, err)
		}
	}
}

// receiver is a real HTTP server taking webhook notifications; it answers
// 503 to the first failures requests.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	failures int
	failOnce string // the first request whose body contains it fails (then it is cleared)
	tries    int
	got      []map[string]any
}

func newReceiver(t *testing.T, failures int) *receiver {
	r := &receiver{failures: failures}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.tries++
		if r.tries <= r.failures || r.failOnce != "" && strings.Contains(string(b), r.failOnce) {
			r.failOnce = ""
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		r.got = append(r.got, m)
	}))
	t.Cleanup(r.Close)
	return r
}

// messages returns the delivered bodies whose event and title match.
func (r *receiver) messages(event, titleHas string) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, m := range r.got {
		if m["event"] == event && strings.Contains(m["title"].(string), titleHas) {
			out = append(out, m)
		}
	}
	return out
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "berth.db"), storetest.Box(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newService(t *testing.T, st *store.Store, engines *engine.Manager) *notify.Service {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if engines == nil {
		engines = engine.NewManager(log)
		t.Cleanup(engines.Close)
	}
	s := notify.New(notify.Options{Store: st, Engines: engines, Events: events.NewHub(engines, log, events.HubOptions{}), Log: log,
		RetryDelay: 10 * time.Millisecond, Reconcile: time.Second})
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func createChannel(t *testing.T, st *store.Store, typ, name, cfg string, types ...string) store.NotificationChannel {
	t.Helper()
	ch := store.NotificationChannel{Type: typ, Name: name, Enabled: true, Config: json.RawMessage(cfg), EventTypes: types}
	if err := st.CreateNotificationChannel(context.Background(), &ch); err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestFailingChannelIsRetriedAndItsErrorRecorded(t *testing.T) {
	st := openStore(t)
	rcv := newReceiver(t, 2)
	ch := createChannel(t, st, "webhook", "flaky", `{"url":"`+rcv.URL+`"}`)
	s := newService(t, st, nil)

	s.Notify(notify.Event{Type: "license_expiring", Title: "License expires soon", Message: "renew"})
	eventually(t, "the third attempt", func() bool { return len(rcv.messages("license_expiring", "License")) == 1 })

	rcv.mu.Lock()
	tries := rcv.tries
	rcv.mu.Unlock()
	if tries != 3 {
		t.Errorf("tries = %d, want 3 (two failures, then the delivery)", tries)
	}
	var got store.NotificationChannel
	eventually(t, "the delivery to be recorded", func() bool {
		var err error
		got, err = st.GetNotificationChannel(context.Background(), ch.ID)
		return err == nil && got.LastSentAt != nil
	})
	if got.LastError != "" || got.LastErrorAt == nil {
		t.Errorf("lastError = %q, lastErrorAt = %v; want the error cleared by the success, its time kept", got.LastError, got.LastErrorAt)
	}
}

func TestChannelThatStaysDownRecordsItsLastError(t *testing.T) {
	st := openStore(t)
	rcv := newReceiver(t, 1000)
	ch := createChannel(t, st, "webhook", "down", `{"url":"`+rcv.URL+`/hook?token=s3cr3t"}`)
	s := newService(t, st, nil)

	s.Notify(notify.Event{Type: "license_expiring", Message: "renew"})
	var got store.NotificationChannel
	eventually(t, "the last attempt to be recorded", func() bool {
		var err error
		got, err = st.GetNotificationChannel(context.Background(), ch.ID)
		return err == nil && strings.HasPrefix(got.LastError, "attempt 5 of 5")
	})
	if want := "attempt 5 of 5: the service answered 503 Service Unavailable"; got.LastError != want {
		t.Errorf("lastError = %q, want %q", got.LastError, want)
	}
	if got.LastSentAt != nil {
		t.Errorf("lastSentAt = %v, want none", got.LastSentAt)
	}
}

func TestContainerThatDiesNotifiesEachSubscribedChannelOnce(t *testing.T) {
	enginetest.Require(t)
	host, port, dir := smtpServer(t)
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st := openStore(t)
	engines := engine.NewManager(log)
	t.Cleanup(engines.Close)
	if err := environments.Bootstrap(ctx, st, engines, enginetest.Socket, log); err != nil {
		t.Fatal(err)
	}
	envs, err := st.ListEnvironments(ctx)
	if err != nil || len(envs) != 1 {
		t.Fatalf("environments: %v %v", envs, err)
	}
	env := envs[0]
	label := "notify-" + unique(t)
	t.Cleanup(func() { enginetest.RemoveLabelled(t, label) })

	rcv := newReceiver(t, 1) // down at first: the delivery is retried
	rcpt := "die-" + unique(t) + "@berth.test"
	hook := createChannel(t, st, "webhook", "hook", `{"url":"`+rcv.URL+`"}`, "container_exited", "container_started")
	mail := createChannel(t, st, "smtp", "mail", `{"host":"`+host+`","port":`+strconv.Itoa(port)+
		`,"from_email":"berth@berth.test","to_emails":["`+rcpt+`"]}`)
	unsubscribed := newReceiver(t, 0)
	createChannel(t, st, "webhook", "not subscribed", `{"url":"`+unsubscribed.URL+`"}`)
	for _, ch := range []store.NotificationChannel{hook, mail} {
		sub := store.EnvironmentNotification{EnvironmentID: env.ID, NotificationID: ch.ID, Enabled: true}
		if ch.ID == mail.ID {
			sub.EventTypes = []string{"container_exited"}
		}
		if err := st.SaveEnvironmentNotification(ctx, &sub, true); err != nil {
			t.Fatal(err)
		}
	}
	s := newService(t, st, engines)
	s.Changed()
	c, err := engines.Client(ctx, env.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, cmd ...string) {
		t.Helper()
		labels := map[string]string{enginetest.Label: label}
		if strings.HasPrefix(name, "scanner-") {
			labels["berth.scanner"] = "grype"
		}
		id, err := c.CreateContainer(ctx, engine.CreateSpec{Name: name, Image: enginetest.Image(), Cmd: cmd, Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.StartContainer(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	// The watcher follows the engine once a probe container's start comes
	// through.
	eventually(t, "the watcher to follow the engine", func() bool {
		probe := "probe-" + unique(t)
		run(probe, "true")
		for range 20 {
			if len(rcv.messages("container_started", probe)) > 0 {
				return true
			}
			time.Sleep(100 * time.Millisecond)
		}
		return false
	})

	scanner := "scanner-" + unique(t) // a scanner's own container never notifies
	run(scanner, "sh", "-c", "exit 4")
	dying := "dies-" + unique(t)
	run(dying, "sh", "-c", "exit 3")
	eventually(t, "the webhook message", func() bool { return len(rcv.messages("container_exited", dying)) > 0 })
	eventually(t, "the mail", func() bool { return len(mails(t, dir, rcpt)) > 0 })
	// A later event has come through: any duplicate of the die would have too.
	after := "after-" + unique(t)
	run(after, "true")
	eventually(t, "a later event", func() bool { return len(rcv.messages("container_started", after)) > 0 })

	hooked := rcv.messages("container_exited", dying)
	if len(hooked) != 1 {
		t.Fatalf("webhook got %d container_exited messages for %s, want 1: %v", len(hooked), dying, hooked)
	}
	if want := "Container " + dying + " exited with code 3"; hooked[0]["title"] != want || hooked[0]["environment"] != env.Name {
		t.Errorf("webhook message %v, want title %q in environment %q", hooked[0], want, env.Name)
	}
	mailed := mails(t, dir, rcpt)
	if len(mailed) != 1 || !strings.Contains(mailed[0], "Subject: Container "+dying+" exited with code 3") {
		t.Errorf("mails to %s: %q, want one about %s", rcpt, mailed, dying)
	}
	for _, m := range mailed {
		if strings.Contains(m, "started") {
			t.Errorf("the mail channel takes container_exited only, got %q", m)
		}
	}
	if got := rcv.messages("container_exited", scanner); len(got) != 0 {
		t.Errorf("a scanner container notified: %v", got)
	}
	if got := rcv.messages("container_started", scanner); len(got) != 0 {
		t.Errorf("a scanner container notified: %v", got)
	}

	// Outcomes other packages report (Emit) reach the subscribed channels
	// that take them, named with their environment.
	s.Emit(env.ID, "container_started", "Emitted "+after, "from another package")
	eventually(t, "the emitted event", func() bool { return len(rcv.messages("container_started", "Emitted "+after)) == 1 })
	if m := rcv.messages("container_started", "Emitted "+after)[0]; m["environment"] != env.Name {
		t.Errorf("emitted message %v, want environment %q", m, env.Name)
	}
	unsubscribed.mu.Lock()
	defer unsubscribed.mu.Unlock()
	if unsubscribed.tries != 0 {
		t.Errorf("a channel the environment does not subscribe to got %d requests", unsubscribed.tries)
	}
}

func TestUnreachableEnvironmentNotifiesOffline(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	env := store.Environment{Name: "gone-" + unique(t), ConnectionType: engine.Socket,
		SocketPath: filepath.Join(t.TempDir(), "no-engine.sock"), Port: 2375, Protocol: "http", Icon: "globe", Labels: []string{}}
	if err := st.CreateEnvironment(ctx, &env); err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t, 0)
	ch := createChannel(t, st, "webhook", "hook", `{"url":"`+rcv.URL+`"}`, "environment_offline")
	sub := store.EnvironmentNotification{EnvironmentID: env.ID, NotificationID: ch.ID, Enabled: true}
	if err := st.SaveEnvironmentNotification(ctx, &sub, true); err != nil {
		t.Fatal(err)
	}
	s := newService(t, st, nil)
	s.Changed()
	eventually(t, "the offline message", func() bool { return len(rcv.messages("environment_offline", env.Name)) > 0 })
	m := rcv.messages("environment_offline", env.Name)[0]
	if m["title"] != "Environment "+env.Name+" is offline" || m["environment"] != env.Name {
		t.Errorf("offline message = %v", m)
	}
}
