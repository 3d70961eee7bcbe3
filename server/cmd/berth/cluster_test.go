package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/servertest"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// Two Berth server processes share one PostgreSQL database. Both register
// the same auto-update schedule (due every minute); at the next minute both
// fire it, and it runs once: one execution row for the tick, and the other
// server logs that another server runs it.
func TestTwoServerProcessesOnOnePostgresRunADueScheduleOnce(t *testing.T) {
	t.Parallel()
	dbURL := storetest.PostgresDatabase(t)
	bin := servertest.Build(t)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	common := []string{"DATABASE_URL=" + dbURL, "ENCRYPTION_KEY=" + hex.EncodeToString(key),
		"LOG_LEVEL=debug", "DOCKER_SOCKET=/nonexistent"}

	dirA := t.TempDir()
	baseA, _, logA := startServer(t, bin, "server A", append(common, "DATA_DIR="+dirA)...)
	cookie := map[string]string{"Cookie": servertest.FirstAdmin(t, baseA, dirA, "admin", "correct horse")}
	// The environment's engine refuses connections (nothing listens on its
	// port): the run fails at once, which is still one run to count.
	var env struct{ ID int64 }
	if status := do(t, "POST", baseA+"/api/environments", cookie, fmt.Sprintf(
		`{"name":"refusing","connectionType":"direct","host":"127.0.0.1","port":%d}`, servertest.FreePort(t)), &env); status != 201 {
		t.Fatalf("create environment = %d", status)
	}
	name := "berth-cluster-" + hex.EncodeToString(key[:4])
	var au struct{ ID int64 }
	if status := do(t, "POST", fmt.Sprintf("%s/api/auto-update/%s?env=%d", baseA, name, env.ID), cookie,
		`{"enabled":true,"cronExpression":"* * * * *","vulnerabilityCriteria":"never"}`, &au); status != 200 || au.ID == 0 {
		t.Fatalf("auto-update = %d %+v", status, au)
	}
	// Server B starts after the schedule exists: it registers it at start.
	_, _, logB := startServer(t, bin, "server B", append(common, "DATA_DIR="+t.TempDir())...)
	registered := time.Now()

	// The first whole minute after both surely registered it (B registers
	// as it starts) is a tick both fire.
	type execution struct {
		ID           int64
		TriggeredBy  string
		TriggeredAt  time.Time
		Status       string
		ErrorMessage *string
		CompletedAt  *time.Time
	}
	var list struct {
		Executions []execution
		Total      int
	}
	query := fmt.Sprintf("%s/api/schedules/executions?scheduleType=container_update&scheduleId=%d", baseA, au.ID)
	firstTick := registered.Add(5 * time.Second).Truncate(time.Minute).Add(time.Minute)
	deadline := firstTick.Add(30 * time.Second)
	var tick []execution
	for time.Now().Before(deadline) {
		if status := do(t, "GET", query, cookie, "", &list); status != 200 {
			t.Fatalf("executions = %d", status)
		}
		tick = tick[:0]
		for _, e := range list.Executions {
			if e.TriggeredBy == "cron" && !e.TriggeredAt.Before(firstTick) && e.TriggeredAt.Before(firstTick.Add(time.Minute)) {
				tick = append(tick, e)
			}
		}
		if len(tick) > 0 && tick[0].CompletedAt != nil &&
			strings.Contains(logA.String()+logB.String(), "due schedule run by another server") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(tick) != 1 {
		t.Fatalf("executions of the tick %s = %+v, want exactly one", firstTick, tick)
	}
	if e := tick[0]; e.CompletedAt == nil || e.Status != "failed" || e.ErrorMessage == nil {
		t.Errorf("execution = %+v, want a finished cron run, failed (the engine is unreachable)", e)
	}
	// Both servers fired the tick: one ran it, the other found it taken.
	a, b := logA.String(), logB.String()
	taken := strings.Count(a, "due schedule run by another server") + strings.Count(b, "due schedule run by another server")
	if taken < 1 {
		t.Errorf("no server logged that the other one runs the tick:\nA:\n%s\nB:\n%s", a, b)
	}
}

// Two Berth server processes share one PostgreSQL database and follow the
// same local engine. A labelled container that dies is one message on the
// webhook both servers' subscription sends to, though both see the die.
func TestTwoServerProcessesOnOnePostgresSendADyingContainerOnce(t *testing.T) {
	enginetest.Require(t)
	t.Parallel()
	dbURL := storetest.PostgresDatabase(t)
	bin := servertest.Build(t)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	label := "berth-cluster-" + hex.EncodeToString(key[:4])
	t.Cleanup(func() { enginetest.RemoveLabelled(t, label) })
	common := []string{"DATABASE_URL=" + dbURL, "ENCRYPTION_KEY=" + hex.EncodeToString(key),
		"LOG_LEVEL=debug", "DOCKER_SOCKET=" + enginetest.Socket}

	var mu sync.Mutex
	var titles []string
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct{ Event, Title string }
		_ = json.NewDecoder(r.Body).Decode(&m)
		mu.Lock()
		defer mu.Unlock()
		titles = append(titles, m.Title)
	}))
	t.Cleanup(rcv.Close)
	received := func(name string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, title := range titles {
			if strings.Contains(title, "Container "+name+" exited") {
				n++
			}
		}
		return n
	}

	dirA := t.TempDir()
	baseA, _, logA := startServer(t, bin, "server A", append(common, "DATA_DIR="+dirA)...)
	cookie := map[string]string{"Cookie": servertest.FirstAdmin(t, baseA, dirA, "admin", "correct horse")}
	waitLocal(t, baseA, cookie["Cookie"])
	var envs []struct{ ID int64 }
	if status := do(t, "GET", baseA+"/api/environments", cookie, "", &envs); status != 200 || len(envs) != 1 {
		t.Fatalf("environments = %d %+v, want the local one", status, envs)
	}
	var ch struct{ ID int64 }
	if status := do(t, "POST", baseA+"/api/notifications", cookie, fmt.Sprintf(
		`{"type":"webhook","name":"hook","enabled":true,"config":{"url":%q},"eventTypes":["container_exited"]}`, rcv.URL),
		&ch); status/100 != 2 || ch.ID == 0 {
		t.Fatalf("create channel = %d %+v", status, ch)
	}
	if status := do(t, "POST", fmt.Sprintf("%s/api/environments/%d/notifications", baseA, envs[0].ID), cookie,
		fmt.Sprintf(`{"notificationId":%d,"enabled":true}`, ch.ID), nil); status/100 != 2 {
		t.Fatalf("subscribe = %d", status)
	}
	// Server B starts after the subscription exists: it follows the
	// environment from its start.
	_, _, logB := startServer(t, bin, "server B", append(common, "DATA_DIR="+t.TempDir())...)

	run := func(name, code string) {
		t.Helper()
		var out struct{ ID string }
		enginetest.Must(t, 201, "POST", "/containers/create?name="+name, nil, map[string]any{
			"Image": enginetest.Image(), "Cmd": []string{"sh", "-c", "exit " + code},
			"Labels": map[string]string{enginetest.Label: label}}, &out)
		enginetest.Must(t, 204, "POST", "/containers/"+out.ID+"/start", nil, nil, nil)
	}
	// seen reports whether both servers produced the message about name
	// (their debug logs say they queued it or found it queued).
	seen := func(name string) bool {
		return strings.Contains(logA.String(), "Container "+name+" exited") &&
			strings.Contains(logB.String(), "Container "+name+" exited")
	}
	deadline := time.Now().Add(90 * time.Second)
	for i := 0; ; i++ {
		probe := fmt.Sprintf("%s-probe-%d", label, i)
		run(probe, "1")
		ok := false
		for range 30 {
			if ok = seen(probe); ok {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the two servers did not both follow the engine")
		}
	}

	dying := label + "-dies"
	run(dying, "3")
	after := label + "-after"
	deadline = time.Now().Add(60 * time.Second)
	for received(dying) == 0 || !seen(dying) {
		if time.Now().After(deadline) {
			t.Fatalf("the message about %s did not come (received %d)", dying, received(dying))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A later message has come through: a duplicate would have too.
	run(after, "4")
	for received(after) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the message about %s did not come", after)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := received(dying); n != 1 {
		t.Errorf("the webhook got %d messages about %s, want 1", n, dying)
	}
}
