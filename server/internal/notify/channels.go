package notify

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/mail"
	"net/smtp"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/shared/fault"
)

// Mask stands for a stored secret in what the API returns; sent back, it
// keeps the stored value.
const Mask = "********"

// Types are the channel types.
var Types = []string{"smtp", "webhook", "slack", "discord", "mattermost", "gotify", "ntfy", "telegram", "pushover"}

// Config is the settings of a channel of any type; each type uses its part.
// Fields holding secrets are listed in secretFields.
type Config struct {
	// smtp
	Host          string   `json:"host,omitempty"`
	Port          int      `json:"port,omitempty"`
	Secure        bool     `json:"secure,omitempty"` // implicit TLS (465); otherwise STARTTLS when offered
	Username      string   `json:"username,omitempty"`
	Password      string   `json:"password,omitempty"`
	FromEmail     string   `json:"from_email,omitempty"`
	FromName      string   `json:"from_name,omitempty"`
	ToEmails      []string `json:"to_emails,omitempty"`
	SkipTLSVerify bool     `json:"skipTlsVerify,omitempty"`
	// webhook, slack, discord, mattermost: the URL posted to; gotify: the
	// server; ntfy: the server and topic (https://ntfy.sh/mytopic)
	URL string `json:"url,omitempty"`
	// gotify application token, ntfy access token, pushover application token
	Token string `json:"token,omitempty"`
	// telegram
	BotToken string `json:"botToken,omitempty"`
	ChatID   string `json:"chatId,omitempty"`
	APIURL   string `json:"apiUrl,omitempty"` // default https://api.telegram.org
	// pushover user key
	User string `json:"user,omitempty"`
	// webhook: extra request headers (an Authorization, say)
	Headers map[string]string `json:"headers,omitempty"`
}

// secretFields are the secret parts of a Config, by JSON name.
func (c *Config) secretFields() map[string]*string {
	return map[string]*string{"password": &c.Password, "url": &c.URL, "token": &c.Token, "botToken": &c.BotToken,
		"user": &c.User}
}

// ParseConfig decodes a channel's config of type typ and validates it.
func ParseConfig(typ string, raw json.RawMessage) (Config, error) {
	var c Config
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &c); err != nil {
			return Config{}, fault.Invalidf("Invalid config: %v", err)
		}
	}
	return c, c.validate(typ)
}

func (c Config) validate(typ string) error {
	switch typ {
	case "smtp":
		if c.Host == "" {
			return fault.New(fault.Invalid, "SMTP host is required")
		}
		if c.Port < 1 || c.Port > 65535 {
			return fault.New(fault.Invalid, "SMTP port must be between 1 and 65535")
		}
		if _, err := mail.ParseAddress(c.FromEmail); err != nil {
			return fault.New(fault.Invalid, "A valid from_email is required")
		}
		if len(c.ToEmails) == 0 {
			return fault.New(fault.Invalid, "At least one recipient (to_emails) is required")
		}
		for _, to := range c.ToEmails {
			if _, err := mail.ParseAddress(to); err != nil {
				return fault.Invalidf("Invalid recipient %q", to)
			}
		}
		if strings.ContainsAny(c.FromName, "\r\n") {
			return fault.New(fault.Invalid, "from_name must be one line")
		}
	case "webhook", "slack", "discord", "mattermost", "ntfy", "gotify":
		if err := checkURL(c.URL); err != nil {
			return err
		}
		if typ == "gotify" && c.Token == "" {
			return fault.New(fault.Invalid, "Gotify application token is required")
		}
	case "telegram":
		if c.BotToken == "" || c.ChatID == "" {
			return fault.New(fault.Invalid, "Telegram botToken and chatId are required")
		}
		if c.APIURL != "" {
			if err := checkURL(c.APIURL); err != nil {
				return err
			}
		}
	case "pushover":
		if c.Token == "" || c.User == "" {
			return fault.New(fault.Invalid, "Pushover token and user are required")
		}
	default:
		return fault.Invalidf("Unknown notification type %q (one of %s)", typ, strings.Join(Types, ", "))
	}
	return nil
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if raw == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fault.New(fault.Invalid, "A valid http(s) url is required")
	}
	return nil
}

// Masked returns c with its secrets replaced by Mask, as JSON.
func (c Config) Masked() json.RawMessage {
	for _, f := range c.secretFields() {
		if *f != "" {
			*f = Mask
		}
	}
	c.Headers = maskHeaders(c.Headers)
	b, _ := json.Marshal(c)
	return b
}

func maskHeaders(h map[string]string) map[string]string {
	if h == nil {
		return nil
	}
	out := make(map[string]string, len(h))
	for k := range h {
		out[k] = Mask
	}
	return out
}

// KeepSecrets puts the stored secrets back where c carries Mask. Stored
// secrets go only where they were saved for: when c sends them to another
// destination (scheme, host and port) than stored of type typ does, it
// refuses (403) and c must carry them again.
func (c *Config) KeepSecrets(stored Config, typ string) error {
	kept := false
	old := stored.secretFields()
	for name, f := range c.secretFields() {
		if *f == Mask {
			*f = *old[name]
			kept = kept || *f != ""
		}
	}
	for k, v := range c.Headers {
		if v == Mask {
			c.Headers[k] = stored.Headers[k]
			kept = kept || c.Headers[k] != ""
		}
	}
	if have, want := stored.Destination(typ), c.Destination(typ); kept && have != want {
		return fault.New(fault.Forbidden, fmt.Sprintf("The stored secrets of this channel are saved for %s, not for %s: enter them again",
			have, orNone(want)))
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "no destination"
	}
	return s
}

// Destination is the origin (scheme://host:port) a channel of type typ
// sends to; "" when c names none.
func (c Config) Destination(typ string) string {
	switch typ {
	case "smtp":
		if c.Host == "" {
			return ""
		}
		return "smtp://" + net.JoinHostPort(strings.ToLower(c.Host), strconv.Itoa(c.Port))
	case "telegram":
		if c.APIURL == "" {
			return outbound.OriginOf("https://api.telegram.org")
		}
		return outbound.OriginOf(c.APIURL)
	case "pushover":
		return outbound.OriginOf("https://api.pushover.net")
	}
	return outbound.OriginOf(c.URL)
}

// Message is what a channel sends.
type Message struct {
	Event Event
}

func (m Message) subject() string {
	if m.Event.Title != "" {
		return m.Event.Title
	}
	return "Berth: " + m.Event.Type
}

func (m Message) text() string {
	var b strings.Builder
	b.WriteString(m.Event.Message)
	if m.Event.Environment != "" {
		fmt.Fprintf(&b, "\nEnvironment: %s", m.Event.Environment)
	}
	return b.String()
}

// sendTimeout bounds one delivery attempt.
const sendTimeout = 20 * time.Second

// Send delivers m through a channel of type typ once, within the outbound
// policy ctx carries (outbound.WithPolicy; none: outbound.Open).
func Send(ctx context.Context, typ string, c Config, m Message) error {
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	switch typ {
	case "smtp":
		return sendMail(ctx, c, m)
	case "webhook":
		return postJSON(ctx, c.URL, c.Headers, map[string]any{"event": m.Event.Type, "title": m.subject(),
			"message": m.Event.Message, "environmentId": m.Event.EnvironmentID, "environment": m.Event.Environment,
			"timestamp": m.Event.Time.UTC().Format(time.RFC3339)})
	case "slack", "mattermost":
		return postJSON(ctx, c.URL, nil, map[string]any{"text": "*" + m.subject() + "*\n" + m.text()})
	case "discord":
		return postJSON(ctx, c.URL, nil, map[string]any{"content": "**" + m.subject() + "**\n" + m.text()})
	case "gotify":
		u := strings.TrimSuffix(c.URL, "/") + "/message?token=" + url.QueryEscape(c.Token)
		return postJSON(ctx, u, nil, map[string]any{"title": m.subject(), "message": m.text(), "priority": 5})
	case "ntfy":
		h := map[string]string{"Title": m.subject()}
		if c.Token != "" {
			h["Authorization"] = "Bearer " + c.Token
		}
		return post(ctx, c.URL, "text/plain; charset=utf-8", h, []byte(m.text()))
	case "telegram":
		base := c.APIURL
		if base == "" {
			base = "https://api.telegram.org"
		}
		return postJSON(ctx, strings.TrimSuffix(base, "/")+"/bot"+c.BotToken+"/sendMessage", nil,
			map[string]any{"chat_id": c.ChatID, "text": m.subject() + "\n" + m.text()})
	case "pushover":
		return postJSON(ctx, "https://api.pushover.net/1/messages.json", nil,
			map[string]any{"token": c.Token, "user": c.User, "title": m.subject(), "message": m.text()})
	}
	return fmt.Errorf("unknown notification type %q", typ)
}

func postJSON(ctx context.Context, u string, headers map[string]string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return post(ctx, u, "application/json", headers, b)
}

// httpClient sends webhook-style notifications under policy p; redirects
// are not followed (a URL carrying a token must not be replayed elsewhere).
func httpClient(p outbound.Policy) *http.Client {
	c := p.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// post sends body to u. Errors never carry u, which may hold a token.
func post(ctx context.Context, u, contentType string, headers map[string]string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return errors.New("invalid url")
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "Berth")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := httpClient(outbound.FromContext(ctx)).Do(req)
	if err != nil {
		if f, ok := outbound.Refused(err); ok {
			return f
		}
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // without the URL
		}
		return fmt.Errorf("request failed: %w", err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("the service answered %s", res.Status)
	}
	return nil
}

// sendMail sends m by SMTP to every recipient of c.
func sendMail(ctx context.Context, c Config, m Message) error {
	addr := net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	tlsConf := &tls.Config{ServerName: c.Host, InsecureSkipVerify: c.SkipTLSVerify} //nolint:gosec // the user's choice
	if err := outbound.CheckName(c.Host); err != nil {
		return err
	}
	d := outbound.FromContext(ctx).Dialer(c.Host)
	var conn net.Conn
	var err error
	if c.Secure {
		conn, err = (&tls.Dialer{NetDialer: d, Config: tlsConf}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", addr)
	}
	if f, ok := outbound.Refused(err); ok {
		return f
	}
	if err != nil {
		return fmt.Errorf("connect to %s: %w", addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	cl, err := smtp.NewClient(conn, c.Host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("smtp: %w", err)
	}
	defer cl.Close()
	if !c.Secure {
		if ok, _ := cl.Extension("STARTTLS"); ok {
			if err := cl.StartTLS(tlsConf); err != nil {
				return fmt.Errorf("smtp starttls: %w", err)
			}
		}
	}
	if c.Username != "" {
		if err := cl.Auth(smtp.PlainAuth("", c.Username, c.Password, c.Host)); err != nil {
			return fmt.Errorf("smtp auth: %w", err)
		}
	}
	if err := cl.Mail(c.FromEmail); err != nil {
		return fmt.Errorf("smtp from: %w", err)
	}
	for _, to := range c.ToEmails {
		if err := cl.Rcpt(to); err != nil {
			return fmt.Errorf("smtp recipient %s: %w", to, err)
		}
	}
	w, err := cl.Data()
	if err != nil {
		return fmt.Errorf("smtp data: %w", err)
	}
	from := (&mail.Address{Name: c.FromName, Address: c.FromEmail}).String()
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMIME-Version: 1.0\r\n"+
		"Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n",
		from, strings.Join(c.ToEmails, ", "), headerValue(m.subject()), time.Now().Format(time.RFC1123Z))
	b.WriteString(strings.ReplaceAll(m.text(), "\n", "\r\n"))
	b.WriteString("\r\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("smtp data: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("smtp data: %w", err)
	}
	return cl.Quit()
}

// headerValue is s as one header line, encoded when it is not ASCII.
func headerValue(s string) string {
	return mime.QEncoding.Encode("utf-8", strings.NewReplacer("\r", " ", "\n", " ").Replace(s))
}
