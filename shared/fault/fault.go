// Package fault provides the typed errors that domain packages return and that
// the api package maps to HTTP statuses in one place.
//
// A fault carries the message a client sees (the spec's text, to the letter),
// optional details for the client, and the underlying cause, which is logged
// but never sent.
package fault

import (
	"errors"
	"fmt"
)

// Kind classifies a fault; the api package turns each kind into one status.
type Kind int

// The kinds of fault. The zero value is Internal.
const (
	Internal     Kind = iota // 500: server error or engine operation failed
	Invalid                  // 400: invalid parameters or body
	Unauthorized             // 401: authentication required
	Forbidden                // 403: permission or environment access denied
	NotFound                 // 404: resource or environment not found
	Conflict                 // 409: a unique name is already taken
	TooMany                  // 429: rate limited
	Unavailable              // 503: a remote service Berth relies on (an image registry) cannot be reached
)

// Error is a fault: a client-facing message of a given kind.
type Error struct {
	Kind    Kind
	Message string // shown to the client
	Details string // optional, shown to the client
	Cause   error  // logged, never shown
}

func (e *Error) Error() string {
	switch {
	case e.Cause != nil:
		return e.Message + ": " + e.Cause.Error()
	case e.Details != "":
		return e.Message + ": " + e.Details
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Cause }

// New returns a fault of kind k with message msg.
func New(k Kind, msg string) *Error { return &Error{Kind: k, Message: msg} }

// Wrap returns a fault of kind k with message msg caused by err.
func Wrap(k Kind, msg string, err error) *Error { return &Error{Kind: k, Message: msg, Cause: err} }

// Invalidf returns an Invalid fault with a formatted message.
func Invalidf(format string, args ...any) *Error {
	return &Error{Kind: Invalid, Message: fmt.Sprintf(format, args...)}
}

// WithDetails returns a copy of the fault whose Details carry d.
func (e *Error) WithDetails(d string) *Error {
	c := *e
	c.Details = d
	return &c
}

// As returns the outermost fault in err's chain, if any.
func As(err error) (*Error, bool) {
	var f *Error
	ok := errors.As(err, &f)
	return f, ok
}

// KindOf returns the kind of the outermost fault in err's chain, or Internal.
func KindOf(err error) Kind {
	if f, ok := As(err); ok {
		return f.Kind
	}
	return Internal
}
