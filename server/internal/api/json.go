package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/berth-dev/berth/shared/fault"
)

// maxBody bounds JSON request bodies.
const maxBody = 1 << 20

// decode reads the JSON body of r into v. An empty body decodes as {}; a
// malformed one, or one followed by more data, is a 400.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	body := http.MaxBytesReader(w, r.Body, maxBody)
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

// writeJSON answers with status and v encoded as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// success is the {success: true} answer of many operations.
var success = map[string]bool{"success": true}

// queryBool reads a boolean query parameter ("true"/"1"/"false"/"0"/absent).
func queryBool(r *http.Request, name string, def bool) (bool, error) {
	v := r.URL.Query().Get(name)
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
