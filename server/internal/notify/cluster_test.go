package notify_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/environments"
	"github.com/berth-dev/berth/server/internal/events"
	"github.com/berth-dev/berth/server/internal/notify"
	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// cluster is one PostgreSQL database that several "servers" (each a store
// of its own on the database and a notify.Service) share.
type cluster struct {
	t   *testing.T
	url string
	box *secret.Box
}

// server is one of them: its store, service and log.
type server struct {
	store *store.Store
	svc   *notify.Service
	log   *apitest.LockedBuffer
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	return &cluster{t: t, url: storetest.PostgresDatabase(t), box: storetest.Box(t)}
}

// open opens a store on the cluster's database.
func (c *cluster) open() *store.Store {
	c.t.Helper()
	st, err := store.Open(context.Background(), c.url, c.box)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { st.Close() })
	return st
}

// start runs a server named node on the database (a store of its own, its
// own engines) until the test ends or its Close; it logs at debug level.
func (c *cluster) start(node string, st *store.Store) *server {
	c.t.Helper()
	if st == nil {
		st = c.open()
	}
	buf := &apitest.LockedBuffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	engines := engine.NewManager(log)
	c.t.Cleanup(engines.Close)
	svc := notify.New(notify.Options{Store: st, Engines: engines, Events: events.NewHub(engines, log, events.HubOptions{}), Log: log,
		Node: node, RetryDelay: 300 * time.Millisecond, Reconcile: time.Second, Poll: 100 * time.Millisecond})
	svc.Start()
	c.t.Cleanup(svc.Close)
	return &server{store: st, svc: svc, log: buf}
}

// outbox returns the status and attempts of the outbox rows whose event
// mentions what.
func outbox(t *testing.T, st *store.Store, what string) [][2]any {
	t.Helper()
	rows, err := st.DB().QueryContext(context.Background(),
		"SELECT status, attempts FROM notification_outbox WHERE payload LIKE $1 ORDER BY id", "%"+what+"%")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][2]any
	for rows.Next() {
		var status string
		var attempts int
		if err := rows.Scan(&status, &attempts); err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]any{status, attempts})
	}
	return out
}

// Two servers share one PostgreSQL database and follow the same engine.
// A container that dies is one message on the subscribed webhook, though
// both servers see its die: the first queues it, the second finds it
// queued. The receiver is down at first: the message comes once it is back.
func TestTwoServersOnOneDatabaseSendADyingContainerOnce(t *testing.T) {
	enginetest.Require(t)
	t.Parallel()
	ctx := context.Background()
	c := newCluster(t)
	stA := c.open()
	log := slog.New(slog.DiscardHandler)
	engines := engine.NewManager(log)
	t.Cleanup(engines.Close)
	if err := environments.Bootstrap(ctx, stA, engines, enginetest.Socket, log); err != nil {
		t.Fatal(err)
	}
	envs, err := stA.ListEnvironments(ctx)
	if err != nil || len(envs) != 1 {
		t.Fatalf("environments: %v %v", envs, err)
	}
	env := envs[0]
	label := "notify-cluster-" + unique(t)
	t.Cleanup(func() { enginetest.RemoveLabelled(t, label) })
	rcv := newReceiver(t, 0)
	hook := createChannel(t, stA, "webhook", "hook", `{"url":"`+rcv.URL+`"}`, "container_exited")
	sub := store.EnvironmentNotification{EnvironmentID: env.ID, NotificationID: hook.ID, Enabled: true}
	if err := stA.SaveEnvironmentNotification(ctx, &sub, true); err != nil {
		t.Fatal(err)
	}
	a, b := c.start("server-a", stA), c.start("server-b", nil)
	cli, err := engines.Client(ctx, env.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	run := func(name, code string) {
		t.Helper()
		id, err := cli.CreateContainer(ctx, engine.CreateSpec{Name: name, Image: enginetest.Image(),
			Cmd: []string{"sh", "-c", "exit " + code}, Labels: map[string]string{enginetest.Label: label}})
		if err != nil {
			t.Fatal(err)
		}
		if err := cli.StartContainer(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	// seen reports whether both servers produced the message about name.
	seen := func(name string) bool {
		return strings.Contains(a.log.String(), "Container "+name+" exited") &&
			strings.Contains(b.log.String(), "Container "+name+" exited")
	}
	// Both watchers follow the engine once both produced a probe's message.
	eventually(t, "both servers to follow the engine", func() bool {
		probe := "probe-" + unique(t)
		run(probe, "1")
		for range 20 {
			if seen(probe) {
				return true
			}
			time.Sleep(100 * time.Millisecond)
		}
		return false
	})

	// The receiver is down for the first request about the dying container
	// (not "the next request": a probe's message may still be on its way).
	dying := "dies-" + unique(t)
	rcv.mu.Lock()
	rcv.failOnce = dying
	rcv.mu.Unlock()
	run(dying, "3")
	eventually(t, "the message about "+dying, func() bool { return len(rcv.messages("container_exited", dying)) > 0 })
	eventually(t, "both servers to produce it", func() bool { return seen(dying) })
	// A later message has come through: a duplicate would have too.
	after := "after-" + unique(t)
	run(after, "4")
	eventually(t, "a later message", func() bool { return len(rcv.messages("container_exited", after)) > 0 })

	if got := rcv.messages("container_exited", dying); len(got) != 1 {
		t.Fatalf("the receiver got %d messages about %s, want 1: %v", len(got), dying, got)
	}
	if got := outbox(t, stA, dying); len(got) != 1 || got[0] != [2]any{"sent", 2} {
		t.Errorf("outbox rows about %s = %v, want one, sent at the second attempt", dying, got)
	}
	both := a.log.String() + b.log.String()
	if !strings.Contains(both, "already queued by another server") {
		t.Errorf("no server found a message queued by the other:\nA:\n%s\nB:\n%s", a.log, b.log)
	}
	ch, err := stA.GetNotificationChannel(ctx, hook.ID)
	if err != nil || ch.LastSentAt == nil || ch.LastErrorAt == nil || ch.LastError != "" {
		t.Errorf("channel = %+v, %v; want its failure recorded, then cleared by the delivery", ch, err)
	}
}

// A message still queued when its server stops (its receiver was down) is
// sent by the server once it runs again, without a new event.
func TestQueuedMessageIsSentAfterARestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCluster(t)
	st := c.open()
	rcv := newReceiver(t, 1000)
	ch := createChannel(t, st, "webhook", "hook", `{"url":"`+rcv.URL+`"}`, "license_expiring")
	first := c.start("server-a", st)
	title := "License expires " + unique(t)
	first.svc.Notify(notify.Event{Type: "license_expiring", Title: title, Message: "renew"})
	eventually(t, "the first attempt to fail", func() bool {
		got, err := st.GetNotificationChannel(ctx, ch.ID)
		return err == nil && strings.HasPrefix(got.LastError, "attempt 1 of 5")
	})
	first.svc.Close()
	if got := outbox(t, st, title); len(got) != 1 || got[0][0] != "pending" {
		t.Fatalf("outbox after the stop = %v, want the message pending", got)
	}
	rcv.mu.Lock()
	rcv.failures = 0 // back up
	rcv.mu.Unlock()

	c.start("server-a", nil) // the same server, restarted
	eventually(t, "the message after the restart", func() bool { return len(rcv.messages("license_expiring", title)) > 0 })
	if got := rcv.messages("license_expiring", title); len(got) != 1 {
		t.Errorf("the receiver got %d messages, want 1: %v", len(got), got)
	}
	eventually(t, "the message marked sent", func() bool {
		got := outbox(t, st, title)
		return len(got) == 1 && got[0][0] == "sent"
	})
}

// A message another server claimed and never settled (it died while
// sending) is taken over by a second server once the claim runs out.
func TestMessageOfADeadServerIsTakenOverAfterItsLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCluster(t)
	st := c.open()
	rcv := newReceiver(t, 0)
	ch := createChannel(t, st, "webhook", "hook", `{"url":"`+rcv.URL+`"}`)
	key := "test:" + unique(t)
	if n, err := st.QueueNotifications(ctx, []store.OutboxEntry{{ChannelID: ch.ID, DedupeKey: key, EventType: "license_expiring",
		Payload: `{"type":"license_expiring","title":"Taken over","time":"2026-11-24T00:00:00Z"}`}}); err != nil || n != 1 {
		t.Fatalf("queue = %d, %v", n, err)
	}
	// The dead server's claim runs out in two seconds.
	now := time.Now()
	if got, err := st.ClaimNotifications(ctx, "dead", now, now.Add(2*time.Second), 10); err != nil || len(got) != 1 {
		t.Fatalf("claim = %v, %v", got, err)
	}
	c.start("server-b", st)
	eventually(t, "the message taken over", func() bool { return len(rcv.messages("license_expiring", "Taken over")) > 0 })
	// The receiver has it before the server records it sent.
	eventually(t, "the message marked sent", func() bool {
		got, err := st.QueuedNotifications(ctx, key)
		return err == nil && len(got) == 1 && got[0].Status == store.OutboxSent
	})
	got, err := st.QueuedNotifications(ctx, key)
	if err != nil || len(got) != 1 || got[0].Status != store.OutboxSent || got[0].Attempts != 2 {
		t.Errorf("outbox = %+v, %v; want sent at the second attempt (the first was the dead server's)", got, err)
	}
	if time.Since(now) < 2*time.Second {
		t.Errorf("taken over after %s, before the dead server's claim ran out", time.Since(now))
	}
}
