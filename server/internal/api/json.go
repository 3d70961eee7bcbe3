package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/shared/fault"
)

// maxBody bounds JSON request bodies.
const maxBody = 1 << 20

// bindJSON reads the JSON body of the request into v. An empty body binds as
// {}; unknown fields are ignored (third-party clients send extra ones); a
// malformed body, a wrong type or more data after the value is a 400, and a
// body over maxBody a 413.
func bindJSON(c *gin.Context, v any) error {
	body := http.MaxBytesReader(c.Writer, c.Request.Body, maxBody)
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return err
		}
		return fault.Wrap(fault.Invalid, "Invalid JSON body", err).WithDetails(err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fault.New(fault.Invalid, "Invalid JSON body").WithDetails("unexpected data after the JSON value")
	}
	return nil
}

// writeJSON answers with status and v encoded as JSON (Content-Type exactly
// application/json, one value per line as encoding/json writes it).
func writeJSON(c *gin.Context, status int, v any) error {
	c.Header("Content-Type", "application/json")
	c.Status(status)
	return json.NewEncoder(c.Writer).Encode(v)
}

// success is the {success: true} answer of many operations.
var success = map[string]bool{"success": true}

// queryBool reads a boolean query parameter ("true"/"1"/"false"/"0"/absent).
func queryBool(c *gin.Context, name string, def bool) (bool, error) {
	v := c.Query(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fault.Invalidf("Query parameter %s must be true or false", name)
	}
	return b, nil
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// convert maps every element of in with f (for the wire forms of lists);
// the result is never nil, so an empty list encodes as [].
func convert[T, U any](in []T, f func(T) U) []U {
	out := make([]U, 0, len(in))
	for _, v := range in {
		out = append(out, f(v))
	}
	return out
}
