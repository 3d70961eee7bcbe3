package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// rawAPI reads the Engine API over the environment's own transport (the one
// the SDK client was built with, never wrapped: the SDK's hijacked
// connections rely on its transport's type), for the answers Berth decodes
// itself into only the fields it needs: the SDK decodes every field of its
// full structs, which for a list of a few hundred containers costs more
// than the engine's own answer.
type rawAPI struct {
	http    *http.Client
	base    string            // scheme://host; the transport dials the engine whatever the host
	headers map[string]string // sent with every request (a Hawser token)
	close   func()            // releases idle connections (nil: nothing to release)
}

// newRawAPI is the rawAPI of transport at base.
func newRawAPI(rt http.RoundTripper, base string, headers map[string]string) *rawAPI {
	r := &rawAPI{http: &http.Client{Transport: rt}, base: base, headers: headers}
	if t, ok := rt.(*http.Transport); ok {
		r.close = t.CloseIdleConnections
	}
	return r
}

// connectError is a request that did not reach the engine (the SDK's
// "error during connect"): it trips the breaker as the SDK's does.
type connectError struct{ err error }

func (e *connectError) Error() string { return "error during connect: " + e.err.Error() }
func (e *connectError) Unwrap() error { return e.err }

// rawGet sends GET path?query (path without the version prefix) at the
// negotiated API version and returns the answer's body. Errors are this
// package's kinds, as the SDK's calls return them, and feed the breaker.
func (c *Client) rawGet(ctx context.Context, path string, query url.Values) ([]byte, error) {
	r := c.conn.raw
	if r == nil {
		return nil, fmt.Errorf("engine: no raw API for environment %d", c.envID)
	}
	u := r.base
	if v := c.cli.ClientVersion(); v != "" {
		u += "/v" + strings.TrimPrefix(v, "v")
	}
	u += path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", "berth")
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, c.fail(transportError(ctx, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, c.fail(transportError(ctx, err))
	}
	if resp.StatusCode >= http.StatusBadRequest {
		err := statusError(resp, body)
		c.m.observe(c.conn, c.envID, err) // the engine answered
		return nil, err
	}
	return body, nil
}

// transportError is err of a request that got no answer: the context's own
// error when the caller left or its deadline passed (as the SDK does: that
// says nothing about the engine), else a connectError.
func transportError(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return err
	}
	return &connectError{err: err}
}

// statusError is the error of an engine's answer with an error status, of
// the kind the SDK's status would translate to.
func statusError(resp *http.Response, body []byte) error {
	msg := strings.TrimSpace(string(body))
	var e struct {
		Message string `json:"message"`
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && json.Unmarshal(body, &e) == nil && e.Message != "" {
		msg = strings.TrimSpace(e.Message)
	}
	if msg == "" {
		msg = fmt.Sprintf("API returned a %d (%s) but provided no error-message", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	var kind error
	switch resp.StatusCode {
	case http.StatusNotFound:
		kind = ErrNotFound
	case http.StatusConflict:
		kind = ErrConflict
	case http.StatusBadRequest:
		kind = ErrInvalid
	case http.StatusUnauthorized, http.StatusForbidden:
		kind = ErrUnauthorized
	}
	err := fmt.Errorf("Error response from daemon: %s", msg) //nolint:staticcheck // the SDK's wording, which Details strips
	return &Error{Kind: kind, Msg: err.Error(), err: err}
}
