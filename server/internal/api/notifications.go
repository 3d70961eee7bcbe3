package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/notify"
	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// notificationJSON is a channel as clients decode it, its secrets masked.
type notificationJSON struct {
	ID          int64           `json:"id"`
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Enabled     bool            `json:"enabled"`
	Config      json.RawMessage `json:"config"`
	EventTypes  []string        `json:"eventTypes"`
	LastError   string          `json:"lastError"`
	LastErrorAt *time.Time      `json:"lastErrorAt"`
	LastSentAt  *time.Time      `json:"lastSentAt"`
	CreatedAt   time.Time       `json:"createdAt"`
	UpdatedAt   time.Time       `json:"updatedAt"`
}

func toNotificationJSON(ch store.NotificationChannel) notificationJSON {
	cfg, _ := notify.ParseConfig(ch.Type, ch.Config) // stored configs were valid; a zero one shows nothing
	return notificationJSON{ID: ch.ID, Type: ch.Type, Name: ch.Name, Enabled: ch.Enabled, Config: cfg.Masked(),
		EventTypes: ch.EventTypes, LastError: ch.LastError, LastErrorAt: ch.LastErrorAt, LastSentAt: ch.LastSentAt,
		CreatedAt: ch.CreatedAt, UpdatedAt: ch.UpdatedAt}
}

// notificationRequest is the body of create, update and test. On update an
// absent field keeps its value, and a secret sent back masked keeps the
// stored secret.
type notificationRequest struct {
	ID         int64           `json:"id"` // test only: a saved channel whose secrets fill the masked ones
	Type       *string         `json:"type"`
	Name       *string         `json:"name"`
	Enabled    *bool           `json:"enabled"`
	Config     json.RawMessage `json:"config"`
	EventTypes *[]string       `json:"eventTypes"`
	// EventTypesSnake is the reference's other name of EventTypes
	// (eventTypes wins when both are sent).
	EventTypesSnake *[]string `json:"event_types"`
}

// apply merges req into ch (the stored channel, or a zero one) and checks
// the result.
func (req notificationRequest) apply(ch *store.NotificationChannel) (notify.Config, error) {
	stored, _ := notify.ParseConfig(ch.Type, ch.Config)
	if req.Type != nil {
		ch.Type = strings.TrimSpace(*req.Type)
	}
	if req.Name != nil {
		ch.Name = strings.TrimSpace(*req.Name)
	}
	if req.Enabled != nil {
		ch.Enabled = *req.Enabled
	}
	if req.EventTypes != nil {
		ch.EventTypes = *req.EventTypes
	} else if req.EventTypesSnake != nil {
		ch.EventTypes = *req.EventTypesSnake
	}
	if ch.EventTypes == nil {
		ch.EventTypes = []string{}
	}
	if ch.Name == "" {
		return notify.Config{}, fault.New(fault.Invalid, "Name is required")
	}
	if len(ch.Name) > 200 {
		return notify.Config{}, fault.New(fault.Invalid, "Name is too long (at most 200 characters)")
	}
	if ch.Type == "" {
		return notify.Config{}, fault.Invalidf("Type is required (one of %s)", strings.Join(notify.Types, ", "))
	}
	for _, t := range ch.EventTypes {
		if !notify.KnownEventType(t) {
			return notify.Config{}, fault.Invalidf("Unknown event type %q", t)
		}
	}
	raw := req.Config
	if len(raw) == 0 {
		raw = ch.Config
	}
	raw, err := withSecrets(raw, stored, ch.Type)
	if err != nil {
		return notify.Config{}, err
	}
	cfg, err := notify.ParseConfig(ch.Type, raw)
	if err != nil {
		return notify.Config{}, err
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return notify.Config{}, err
	}
	ch.Config = b
	return cfg, nil
}

// withSecrets is raw with masked secrets replaced by the stored ones, before
// validation (a masked URL is not a valid URL). Stored secrets are kept
// only for the destination they were saved for (403 otherwise).
func withSecrets(raw json.RawMessage, stored notify.Config, typ string) (json.RawMessage, error) {
	var c notify.Config
	if err := json.Unmarshal(raw, &c); err != nil {
		return raw, nil // ParseConfig reports it
	}
	if err := c.KeepSecrets(stored, typ); err != nil {
		return nil, err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return raw, nil
	}
	return b, nil
}

func (s *Server) listNotifications(c *gin.Context) error {
	list, err := s.store.ListNotificationChannels(c.Request.Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, convert(list, toNotificationJSON))
}

func (s *Server) notificationChannel(c *gin.Context) (store.NotificationChannel, error) {
	id, err := pathID(c, "Notification")
	if err != nil {
		return store.NotificationChannel{}, err
	}
	ch, err := s.store.GetNotificationChannel(c.Request.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return ch, fault.Wrap(fault.NotFound, "Notification not found", err)
	}
	return ch, err
}

func (s *Server) getNotification(c *gin.Context) error {
	ch, err := s.notificationChannel(c)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toNotificationJSON(ch))
}

func (s *Server) createNotification(c *gin.Context) error {
	var req notificationRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	ch := store.NotificationChannel{Enabled: true}
	if _, err := req.apply(&ch); err != nil {
		return err
	}
	if err := s.store.CreateNotificationChannel(c.Request.Context(), &ch); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return fault.Wrap(fault.Conflict, "A notification channel with this name already exists", err)
		}
		return err
	}
	noteAudit(c, strconv.FormatInt(ch.ID, 10), ch.Name)
	return writeJSON(c, http.StatusCreated, toNotificationJSON(ch))
}

func (s *Server) updateNotification(c *gin.Context) error {
	ch, err := s.notificationChannel(c)
	if err != nil {
		return err
	}
	var req notificationRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if _, err := req.apply(&ch); err != nil {
		return err
	}
	if err := s.store.UpdateNotificationChannel(c.Request.Context(), &ch); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return fault.Wrap(fault.Conflict, "A notification channel with this name already exists", err)
		}
		return err
	}
	noteAudit(c, strconv.FormatInt(ch.ID, 10), ch.Name)
	return writeJSON(c, http.StatusOK, toNotificationJSON(ch))
}

func (s *Server) deleteNotification(c *gin.Context) error {
	ch, err := s.notificationChannel(c)
	if err != nil {
		return err
	}
	if err := s.store.DeleteNotificationChannel(c.Request.Context(), ch.ID); err != nil {
		return err
	}
	s.notify.Changed()
	noteAudit(c, strconv.FormatInt(ch.ID, 10), ch.Name)
	return writeJSON(c, http.StatusOK, success)
}

// testOutcome answers a test: {success: true} or {success: false, error};
// a refusal of the outbound policy is the request's error (403).
func testOutcome(c *gin.Context, err error) error {
	if _, refused := outbound.Refused(err); refused {
		return err
	}
	if err != nil {
		return writeJSON(c, http.StatusOK, map[string]any{"success": false, "error": err.Error()})
	}
	return writeJSON(c, http.StatusOK, success)
}

func (s *Server) testNotification(c *gin.Context) error {
	ch, err := s.notificationChannel(c)
	if err != nil {
		return err
	}
	cfg, err := notify.ParseConfig(ch.Type, ch.Config)
	if err != nil {
		return err
	}
	ctx, err := s.outbound.Context(c.Request.Context())
	if err != nil {
		return err
	}
	return testOutcome(c, notify.Test(ctx, ch.Type, cfg, ch.Name))
}

// testNewNotification tests unsaved settings; with an id, the saved
// channel's secrets fill those sent masked.
func (s *Server) testNewNotification(c *gin.Context) error {
	var req notificationRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	var ch store.NotificationChannel
	if req.ID > 0 {
		saved, err := s.store.GetNotificationChannel(c.Request.Context(), req.ID)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return fault.Wrap(fault.NotFound, "Notification not found", err)
			}
			return err
		}
		ch = saved
	}
	if req.Name == nil && ch.Name == "" {
		name := "unsaved"
		req.Name = &name
	}
	cfg, err := req.apply(&ch)
	if err != nil {
		return err
	}
	ctx, err := s.outbound.Context(c.Request.Context())
	if err != nil {
		return err
	}
	return testOutcome(c, notify.Test(ctx, ch.Type, cfg, ch.Name))
}

// notificationCatalogue lists the channel types and event ids.
func (s *Server) notificationCatalogue(c *gin.Context) error {
	return writeJSON(c, http.StatusOK, map[string]any{"types": notify.Types, "eventTypes": notify.EventTypes})
}

// triggerTestNotification dispatches a test event through the subscriptions,
// as a real event would go: {environmentId?, eventType?, payload?} (default
// container_started; without an environment, to every channel taking it;
// payload {title, message, type?} replaces the test text).
func (s *Server) triggerTestNotification(c *gin.Context) error {
	var req triggerTestInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.EventType == "" {
		req.EventType = "container_started"
	}
	if !notify.KnownEventType(req.EventType) {
		return fault.Invalidf("Unknown event type %q", req.EventType)
	}
	ev := notify.Event{Type: req.EventType, Title: "Berth test notification (" + req.EventType + ")",
		Message: "This is a test event sent through the notification subscriptions."}
	if p := req.Payload; p != nil {
		if strings.TrimSpace(p.Title) == "" || strings.TrimSpace(p.Message) == "" {
			return fault.New(fault.Invalid, "payload needs a title and a message")
		}
		ev.Title, ev.Message = p.Title, p.Message
		switch p.Type {
		case "", "info":
		case "success", "warning", "error":
			ev.Title = "[" + strings.ToUpper(p.Type[:1]) + p.Type[1:] + "] " + p.Title
		default:
			return fault.Invalidf("payload.type must be info, success, warning or error, not %q", p.Type)
		}
	}
	if req.EnvironmentID > 0 {
		env, err := s.store.GetEnvironment(c.Request.Context(), req.EnvironmentID)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return fault.Wrap(fault.NotFound, "Environment not found", err)
			}
			return err
		}
		ev.EnvironmentID, ev.Environment = env.ID, env.Name
	}
	s.notify.Notify(ev)
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "eventType": req.EventType})
}

// subscriptionJSON is an environment's subscription to a channel.
type subscriptionJSON struct {
	ID             int64     `json:"id"`
	EnvironmentID  int64     `json:"environmentId"`
	NotificationID int64     `json:"notificationId"`
	Enabled        bool      `json:"enabled"`
	EventTypes     []string  `json:"eventTypes"`
	ChannelName    string    `json:"channelName"`
	ChannelType    string    `json:"channelType"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
}

func (s *Server) toSubscriptionJSON(c *gin.Context, n store.EnvironmentNotification) (subscriptionJSON, error) {
	out := subscriptionJSON{ID: n.ID, EnvironmentID: n.EnvironmentID, NotificationID: n.NotificationID,
		Enabled: n.Enabled, EventTypes: n.EventTypes, CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt}
	ch, err := s.store.GetNotificationChannel(c.Request.Context(), n.NotificationID)
	if err != nil {
		return out, err
	}
	out.ChannelName, out.ChannelType = ch.Name, ch.Type
	return out, nil
}

func (s *Server) listEnvNotifications(c *gin.Context) error {
	list, err := s.store.ListEnvironmentNotifications(c.Request.Context(), envOf(c).ID)
	if err != nil {
		return err
	}
	out := make([]subscriptionJSON, 0, len(list))
	for _, n := range list {
		j, err := s.toSubscriptionJSON(c, n)
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	return writeJSON(c, http.StatusOK, out)
}

func notificationIDParam(c *gin.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("notificationId"), 10, 64)
	if err != nil || id <= 0 {
		return 0, fault.New(fault.NotFound, "Notification not found")
	}
	return id, nil
}

// subscriptionRequest is the body of a subscription's create and update.
type subscriptionRequest struct {
	NotificationID int64     `json:"notificationId"`
	Enabled        *bool     `json:"enabled"`
	EventTypes     *[]string `json:"eventTypes"`
}

func (req subscriptionRequest) apply(n *store.EnvironmentNotification) error {
	if req.Enabled != nil {
		n.Enabled = *req.Enabled
	}
	if req.EventTypes != nil {
		n.EventTypes = *req.EventTypes
	}
	if n.EventTypes == nil {
		n.EventTypes = []string{}
	}
	for _, t := range n.EventTypes {
		if !notify.KnownEventType(t) || t == "license_expiring" {
			return fault.Invalidf("Unknown event type %q", t)
		}
	}
	n.EventTypes = slices.Compact(n.EventTypes)
	return nil
}

func (s *Server) saveSubscription(c *gin.Context, n store.EnvironmentNotification, create bool) error {
	if err := s.store.SaveEnvironmentNotification(c.Request.Context(), &n, create); err != nil {
		switch {
		case errors.Is(err, store.ErrConflict):
			return fault.Wrap(fault.Conflict, "The environment already subscribes to this notification", err)
		case errors.Is(err, store.ErrNotFound):
			return fault.Wrap(fault.NotFound, "Notification not found", err)
		}
		return err
	}
	s.notify.Changed()
	noteAudit(c, strconv.FormatInt(n.NotificationID, 10), envOf(c).Name)
	j, err := s.toSubscriptionJSON(c, n)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if create {
		status = http.StatusCreated
	}
	return writeJSON(c, status, j)
}

func (s *Server) createEnvNotification(c *gin.Context) error {
	var req subscriptionRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.NotificationID <= 0 {
		return fault.New(fault.Invalid, "notificationId is required")
	}
	n := store.EnvironmentNotification{EnvironmentID: envOf(c).ID, NotificationID: req.NotificationID, Enabled: true}
	if err := req.apply(&n); err != nil {
		return err
	}
	return s.saveSubscription(c, n, true)
}

func (s *Server) envNotification(c *gin.Context) (store.EnvironmentNotification, error) {
	id, err := notificationIDParam(c)
	if err != nil {
		return store.EnvironmentNotification{}, err
	}
	n, err := s.store.GetEnvironmentNotification(c.Request.Context(), envOf(c).ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return n, fault.Wrap(fault.NotFound, "Notification not found", err)
	}
	return n, err
}

func (s *Server) getEnvNotification(c *gin.Context) error {
	n, err := s.envNotification(c)
	if err != nil {
		return err
	}
	j, err := s.toSubscriptionJSON(c, n)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, j)
}

func (s *Server) updateEnvNotification(c *gin.Context) error {
	n, err := s.envNotification(c)
	if err != nil {
		return err
	}
	var req subscriptionRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if err := req.apply(&n); err != nil {
		return err
	}
	return s.saveSubscription(c, n, false)
}

func (s *Server) deleteEnvNotification(c *gin.Context) error {
	n, err := s.envNotification(c)
	if err != nil {
		return err
	}
	if err := s.store.DeleteEnvironmentNotification(c.Request.Context(), n.EnvironmentID, n.NotificationID); err != nil {
		return err
	}
	s.notify.Changed()
	noteAudit(c, strconv.FormatInt(n.NotificationID, 10), envOf(c).Name)
	return writeJSON(c, http.StatusOK, success)
}

// StopNotifications stops the notifier's background work (the engine event
// watchers, deliveries waiting for a retry) and waits for it.
func (s *Server) StopNotifications() { s.notify.Close() }
