package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/events"
	"github.com/berth-dev/berth/server/internal/store"
)

// watchLoop follows the engine events of every environment with an enabled
// subscription, starting and stopping followers as subscriptions change.
func (s *Service) watchLoop() {
	watching := map[int64]context.CancelFunc{}
	var wg sync.WaitGroup
	defer func() {
		for _, stop := range watching {
			stop()
		}
		wg.Wait()
	}()
	tick := time.NewTicker(s.o.Reconcile)
	defer tick.Stop()
	for {
		ids, err := s.o.Store.SubscribedEnvironments(s.ctx)
		switch {
		case err != nil && strings.Contains(err.Error(), "database is closed"):
			return // the store is gone: Berth is stopping
		case err != nil:
			if s.ctx.Err() == nil {
				s.o.Log.Warn("notification: cannot read the subscribed environments", "err", err)
			}
		default:
			want := map[int64]bool{}
			for _, id := range ids {
				want[id] = true
				if watching[id] != nil {
					continue
				}
				env, err := s.o.Store.GetEnvironment(s.ctx, id)
				if err != nil {
					continue
				}
				ctx, stop := context.WithCancel(s.ctx)
				watching[id] = stop
				wg.Add(1)
				go func() {
					defer wg.Done()
					s.watch(ctx, env)
				}()
			}
			for id, stop := range watching {
				if !want[id] {
					stop()
					delete(watching, id)
				}
			}
		}
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		case <-s.wake:
		}
	}
}

// memory is how long a kill or an OOM of a container explains its die.
const memory = time.Minute

// watch turns the engine events of env into notification events until ctx
// ends.
func (s *Service) watch(ctx context.Context, env store.Environment) {
	w := &watcher{s: s, env: env, explained: map[string]time.Time{}, scanners: map[string]bool{}}
	for {
		err := s.follow(ctx, w)
		if !errors.Is(err, events.ErrLagged) || ctx.Err() != nil {
			return
		}
		s.o.Log.Warn("notification: events of the environment came faster than they were handled; some were missed",
			"environment", env.Name)
	}
}

// follow handles the events of w's environment until ctx ends or the hub
// drops the subscription (its error).
func (s *Service) follow(ctx context.Context, w *watcher) error {
	env := w.env
	return s.o.Events.Follow(ctx, env, func(ev events.Event) error {
		w.handle(ctx, ev)
		return nil
	}, func(err error) error {
		if !w.offline {
			w.offline, w.reached = true, true
			if w.switchReachability(ctx, "offline") {
				s.Notify(Event{Type: "environment_offline", EnvironmentID: env.ID, Environment: env.Name,
					Title: fmt.Sprintf("Environment %s is offline", env.Name), Message: "Berth cannot reach its engine: " + err.Error()})
			}
		}
		return nil
	})
}

// switchReachability sets the environment's reachability, shared by the
// servers on the database, and reports whether this server changed it:
// then it is the one that notifies.
func (w *watcher) switchReachability(ctx context.Context, to string) bool {
	changed, err := w.s.o.Store.SwitchNotificationState(ctx, fmt.Sprintf("environment:%d:reachability", w.env.ID), to, "online")
	if err != nil {
		if ctx.Err() == nil {
			w.s.o.Log.Warn("notification: cannot record the environment's reachability", "environment", w.env.Name, "err", err)
		}
		return false
	}
	return changed
}

type watcher struct {
	s         *Service
	env       store.Environment
	offline   bool                 // as this server sees it
	reached   bool                 // whether the engine's reachability was recorded since the watch started
	explained map[string]time.Time // container id → when a kill or OOM was seen
	scanners  map[string]bool      // container id → whether it runs a vulnerability scanner
}

// scannerLabel marks the containers the scan package runs: they never notify.
const scannerLabel = "berth.scanner"

// scanner reports whether container id is a scanner's own (remembered: a
// scanner container is gone soon after it ends).
func (w *watcher) scanner(ctx context.Context, id string) bool {
	if v, ok := w.scanners[id]; ok {
		return v
	}
	c, err := w.s.o.Engines.Client(ctx, w.env.Endpoint())
	if err != nil {
		return false
	}
	raw, _, err := c.InspectContainer(ctx, id)
	if err != nil {
		return false
	}
	var doc struct {
		Config struct {
			Labels map[string]string
		}
	}
	_ = json.Unmarshal(raw, &doc)
	_, is := doc.Config.Labels[scannerLabel]
	if len(w.scanners) > 1000 {
		clear(w.scanners)
	}
	w.scanners[id] = is
	return is
}

// notify notifies an event caused by the engine event ev (key names it).
func (w *watcher) notify(typ, title, msg string, ev events.Event) {
	t := time.Now()
	if ev.Time > 0 {
		t = time.Unix(ev.Time, 0)
	}
	w.s.Notify(Event{Type: typ, EnvironmentID: w.env.ID, Environment: w.env.Name, Title: title, Message: msg, Time: t,
		Key: engineKey(w.env.ID, ev)})
}

// engineKey is EngineKey of ev.
func engineKey(envID int64, ev events.Event) string {
	nano := ev.TimeNano
	if nano == 0 {
		nano = ev.Time * int64(time.Second)
	}
	_, action, _ := strings.Cut(ev.Name, "-")
	return EngineKey(envID, nano, ev.ID, action)
}

// handle maps one engine event (COMPAT.md): start, stop, restart, die with
// a non-zero exit that no kill or OOM explains (a stop by a user is
// container_stopped, not an exit), oom, health changes, image pulls.
func (w *watcher) handle(ctx context.Context, ev events.Event) {
	// The first event after the engine could not be reached (or after
	// the watch started: it may have been recorded offline before) makes
	// it online again.
	if w.offline || !w.reached {
		w.offline, w.reached = false, true
		if w.switchReachability(ctx, "online") {
			w.s.Notify(Event{Type: "environment_online", EnvironmentID: w.env.ID, Environment: w.env.Name,
				Title: fmt.Sprintf("Environment %s is online", w.env.Name), Message: "Its engine answers again."})
		}
	}
	name := ev.Object
	if name == "" && len(ev.ID) >= 12 {
		name = ev.ID[:12]
	}
	for id, at := range w.explained {
		if time.Since(at) > memory {
			delete(w.explained, id)
		}
	}
	if strings.HasPrefix(ev.Name, "container-") && w.scanner(ctx, ev.ID) {
		return
	}
	switch ev.Name {
	case "container-start":
		w.notify("container_started", "Container "+name+" started", "Container "+name+" started.", ev)
	case "container-stop":
		w.notify("container_stopped", "Container "+name+" stopped", "Container "+name+" stopped.", ev)
	case "container-restart":
		w.notify("container_restarted", "Container "+name+" restarted", "Container "+name+" restarted.", ev)
	case "container-kill":
		w.explained[ev.ID] = time.Now()
	case "container-oom":
		w.explained[ev.ID] = time.Now()
		w.notify("container_oom", "Container "+name+" ran out of memory", "Container "+name+" was killed: out of memory.", ev)
	case "container-die":
		if _, ok := w.explained[ev.ID]; ok {
			delete(w.explained, ev.ID)
			return
		}
		code, err := w.exitCode(ctx, ev.ID)
		if err != nil || code == 0 {
			return
		}
		w.notify("container_exited", fmt.Sprintf("Container %s exited with code %d", name, code),
			fmt.Sprintf("Container %s exited with code %d.", name, code), ev)
	case "container-health_status":
		health := w.health(ctx, ev.ID)
		switch health {
		case "unhealthy":
			w.notify("container_unhealthy", "Container "+name+" is unhealthy", "Container "+name+" failed its health check.", ev)
		case "healthy":
			w.notify("container_healthy", "Container "+name+" is healthy", "Container "+name+" passes its health check.", ev)
		}
	case "image-pull":
		w.notify("image_pulled", "Image "+name+" pulled", "Image "+name+" was pulled.", ev)
	}
}

func (w *watcher) exitCode(ctx context.Context, id string) (int, error) {
	c, err := w.s.o.Engines.Client(ctx, w.env.Endpoint())
	if err != nil {
		return 0, err
	}
	_, st, err := c.InspectContainer(ctx, id)
	if err != nil {
		return 0, err
	}
	return st.ExitCode, nil
}

func (w *watcher) health(ctx context.Context, id string) string {
	c, err := w.s.o.Engines.Client(ctx, w.env.Endpoint())
	if err != nil {
		return ""
	}
	_, st, err := c.InspectContainer(ctx, id)
	if err != nil {
		return ""
	}
	return st.Health
}
